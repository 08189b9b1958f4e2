// --bind auto on GPU ranks never gives the ranks of one host different NCCL_IB_HCA values (NCCL needs one
// value for the whole job): it records each rank's nearest NIC and sets nothing. Runs bind_rank for real on
// the DGX H100 fixture, then puts this process's CPU affinity and memory policy back.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "binding.hpp"
#include "ccbench/topo/topology_json.hpp"

namespace ccbench {
namespace {

TEST(AppBinding, GpuRanksOfOneHostGetNoNcclIbHcaOfTheirOwn) {
  ::unsetenv("NCCL_IB_HCA");
  std::ifstream in(std::string(CCBENCH_TOPO_DATA_DIR) + "/dgx_h100.json");
  ASSERT_TRUE(in.good());
  const topo::HostTopology host = topo::host_topology_from_json(nlohmann::json::parse(in));
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(before), &before), 0);
  for (int local_rank : {0, 1}) {
    const BindingRecord r = bind_rank(BindPolicy::Auto, host, BindingInputs{local_rank, 8, true, {}, {}});
    EXPECT_EQ(std::getenv("NCCL_IB_HCA"), nullptr) << "rank " << local_rank << " set NCCL_IB_HCA";
    EXPECT_FALSE(r.nic_applied) << *r.nic_applied;
    EXPECT_EQ(r.nic, local_rank == 0 ? "mlx5_0" : "mlx5_3");  // recorded: the NIC nearest its GPU
    EXPECT_NE(r.note.find("NCCL_IB_HCA left unset"), std::string::npos) << r.note;
    ::unsetenv("NCCL_IB_HCA");  // so that the second rank is judged on its own
  }
  ASSERT_EQ(::sched_setaffinity(0, sizeof(before), &before), 0);
}

}  // namespace
}  // namespace ccbench
