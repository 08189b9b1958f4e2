#include "ccbench/environment.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ccbench {
namespace {

TEST(Environment, AllowListTakesCommunicationVariablesOnly) {
  const char* env[] = {"NCCL_ALGO=Ring",
                       "NCCL_IB_HCA=mlx5_0,mlx5_1",
                       "UCX_TLS=rc",
                       "OMPI_MCA_btl=tcp,self",
                       "CUDA_VISIBLE_DEVICES=0,1",
                       "HOME=/root",
                       "AWS_SECRET_ACCESS_KEY=abc",
                       "NCCL_SECRET_TOKEN=abc",
                       "OMPI_MCA_orte_precondition_transports=deadbeef",
                       "OMPI_MCA_orte_hnp_uri=tcp://1.2.3.4",
                       "PATH=/usr/bin",
                       "MALFORMED",
                       nullptr};
  const auto vars = communication_variables(env);
  EXPECT_EQ(vars.size(), 5U);
  EXPECT_EQ(vars.at("NCCL_IB_HCA"), "mlx5_0,mlx5_1");
  EXPECT_EQ(vars.at("OMPI_MCA_btl"), "tcp,self");
  EXPECT_FALSE(vars.contains("HOME"));
  EXPECT_FALSE(vars.contains("NCCL_SECRET_TOKEN"));
  EXPECT_FALSE(vars.contains("OMPI_MCA_orte_precondition_transports"));
  EXPECT_FALSE(vars.contains("OMPI_MCA_orte_hnp_uri"));
}

// Secret-like words anywhere in a name and in any case keep it out; partition keys are settings.
TEST(Environment, SecretWordsInAnyCaseAndKnownSettings) {
  for (const char* secret : {"OMPI_MCA_token", "OMPI_MCA_password", "UCX_PASSPHRASE", "NCCL_AUTH", "NCCL_Secret_x",
                             "UCX_private_path", "NCCL_IB_KEY", "ompi_mca_btl_tcp_passwd", "FI_CREDENTIAL_FILE",
                             "OMPI_MCA_orte_hnp_uri", "ompi_mca_orte_hnp_uri"}) {
    EXPECT_FALSE(is_allowed_variable(secret)) << secret;
  }
  for (const char* setting : {"NCCL_IB_PKEY", "UCX_IB_PKEY", "OMPI_MCA_btl_openib_pkey", "NCCL_IB_HCA", "nccl_debug",
                              "OMPI_MCA_btl_tcp_if_include", "omp_num_threads"}) {
    EXPECT_TRUE(is_allowed_variable(setting)) << setting;
  }
  EXPECT_FALSE(is_allowed_variable("HOME"));
}

TEST(Environment, TimesAndIds) {
  EXPECT_EQ(utc_now_iso8601().size(), std::string("2026-11-22T04:05:06.123Z").size());
  EXPECT_EQ(utc_now_iso8601().back(), 'Z');
  EXPECT_EQ(utc_now_compact().size(), std::string("20261122T040506Z").size());
  EXPECT_EQ(make_run_id().size(), 16U);
  EXPECT_NE(make_run_id(), make_run_id());
  EXPECT_FALSE(local_hostname().empty());
}

// What tells host names apart as machines: the boot id and the MACs of every interface but lo, in any order.
TEST(Environment, MachineIdentityIsTheBootIdAndTheInterfaces) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("ccbench-identity-" + std::to_string(::getpid()));
  const auto write = [&root](const std::string& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text << "\n";
  };
  write("proc/sys/kernel/random/boot_id", "460ddecc-f077-4326-aa76-c20d5ab370c2");
  write("sys/class/net/lo/address", "00:00:00:00:00:00");
  write("sys/class/net/eth0/address", "52:54:00:12:34:56");
  write("sys/class/net/ib0/address", "80:00:02:08:fe:80");
  const std::string proc = (root / "proc").string();
  const std::string sys = (root / "sys").string();
  const std::string first = machine_identity(proc, sys);
  EXPECT_EQ(first.rfind("boot_id 460ddecc-f077-4326-aa76-c20d5ab370c2 interfaces ", 0), 0U) << first;
  EXPECT_NE(first.find("(2 MACs)"), std::string::npos) << first;
  write("sys/class/net/lo/address", "00:00:00:00:00:01");  // lo is never counted
  EXPECT_EQ(machine_identity(proc, sys), first);
  write("sys/class/net/eth0/address", "52:54:00:12:34:57");  // another namespace's veth: another machine
  EXPECT_NE(machine_identity(proc, sys), first);
  EXPECT_EQ(machine_identity((root / "none").string(), (root / "none").string()), "");
  EXPECT_NE(machine_identity(), "");  // this machine has a boot id
  fs::remove_all(root);
}

}  // namespace
}  // namespace ccbench
