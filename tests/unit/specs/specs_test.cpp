// The spec database: the built-in document parses, every entry cites a source, NVML names map to
// the right entry (and unknown names to none), PCIe and NIC figures match DESIGN §4.
#include "ccbench/topo/specs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace ccbench::topo {
namespace {

const SpecDatabase& db() { return SpecDatabase::builtin(); }

TEST(SpecDatabase, BuiltinParsesAndEveryEntryHasASource) {
  ASSERT_FALSE(db().gpus().empty());
  for (const auto& gpu : db().gpus()) {
    EXPECT_FALSE(gpu.source.empty()) << gpu.model;
    EXPECT_NE(gpu.source.find("http"), std::string::npos) << gpu.model << ": the source names a URL";
    EXPECT_FALSE(gpu.nvml_names_source.empty()) << gpu.model;
    EXPECT_FALSE(gpu.nvml_names.empty()) << gpu.model;
  }
  ASSERT_FALSE(db().nic_ports().empty());
  for (const auto& port : db().nic_ports()) {
    EXPECT_FALSE(port.link.source.empty()) << port.link.name;
  }
  EXPECT_FALSE(db().pcie_source().empty());
  EXPECT_EQ(&SpecDatabase::builtin(), &db()) << "parsed once";
}

struct NameCase {
  const char* nvml_name;  // as NVML / nvidia-smi report it (sources in hardware.json)
  const char* model;
};

void PrintTo(const NameCase& c, std::ostream* os) { *os << '"' << c.nvml_name << "\" -> " << c.model; }

class RealNvmlNames : public ::testing::TestWithParam<NameCase> {};

TEST_P(RealNvmlNames, MapToExactlyOneEntry) {
  const NameCase c = GetParam();
  const GpuSpec* spec = db().find_gpu(c.nvml_name);
  ASSERT_NE(spec, nullptr) << c.nvml_name;
  EXPECT_EQ(spec->model, c.model);
  EXPECT_EQ(db().matching_gpus(c.nvml_name).size(), 1U) << c.nvml_name << " must not be ambiguous";
}

INSTANTIATE_TEST_SUITE_P(
    SpecDatabase, RealNvmlNames,
    ::testing::Values(NameCase{"NVIDIA H100 80GB HBM3", "H100 SXM"}, NameCase{"NVIDIA H100 PCIe", "H100 PCIe"},
                      NameCase{"NVIDIA H100 NVL", "H100 NVL"}, NameCase{"NVIDIA H800", "H800 SXM"},
                      NameCase{"NVIDIA H800 PCIe", "H800 PCIe"}, NameCase{"NVIDIA H200", "H200 SXM"},
                      NameCase{"NVIDIA H200 NVL", "H200 NVL"}, NameCase{"NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"},
                      NameCase{"NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"},
                      NameCase{"A100-SXM4-40GB", "A100 SXM4 40GB"},  // drivers before R460
                      NameCase{"NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"},
                      NameCase{"NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"},
                      NameCase{"NVIDIA A800-SXM4-80GB", "A800 SXM4 80GB"},
                      NameCase{"NVIDIA A800 80GB PCIe", "A800 PCIe 80GB"},
                      NameCase{"NVIDIA A800 80GB PCIe LC", "A800 PCIe 80GB"}, NameCase{"NVIDIA B200", "B200"}),
    [](const ::testing::TestParamInfo<NameCase>& param_info) {
      std::string name = param_info.param.nvml_name;
      std::ranges::replace_if(
          name, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) == 0; }, '_');
      return name;
    });

TEST(SpecDatabase, FindGpuIgnoresCaseAndSurroundingBlanks) {
  ASSERT_NE(db().find_gpu("nvidia h100 80gb hbm3"), nullptr);
  EXPECT_EQ(db().find_gpu("  NVIDIA H100 80GB HBM3 \n")->model, "H100 SXM");
}

TEST(SpecDatabase, UnknownNamesGetNullNeverAGuess) {
  for (const char* name : {"NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-32GB", "NVIDIA GB200", "NVIDIA GH200 480GB",
                           "NVIDIA H20", "NVIDIA H800 NVL", "NVIDIA H100", "NVIDIA H100 80GB HBM3 (copy)",
                           "NVIDIA A800-SXM4-40GB", "NVIDIA B300 SXM6 AC", "", "   "}) {
    EXPECT_EQ(db().find_gpu(name), nullptr) << '"' << name << "\" is not in the database";
  }
}

TEST(SpecDatabase, NvlinkAndHbmFiguresMatchDesign) {
  struct Row {
    const char* model;
    int version;
    int links;
    double per_direction;
    double hbm;
  };
  for (const Row& r : {Row{"H100 SXM", 4, 18, 450.0, 3350.0}, Row{"H200 SXM", 4, 18, 450.0, 4800.0},
                       Row{"H800 SXM", 4, 8, 200.0, 3350.0}, Row{"A100 SXM4 80GB", 3, 12, 300.0, 2039.0},
                       Row{"A800 SXM4 80GB", 3, 8, 200.0, 2039.0}, Row{"B200", 5, 18, 900.0, 8000.0}}) {
    const auto& gpus = db().gpus();
    const auto it = std::ranges::find(gpus, std::string{r.model}, &GpuSpec::model);
    ASSERT_NE(it, gpus.end()) << r.model;
    EXPECT_EQ(it->nvlink_version, r.version) << r.model;
    EXPECT_EQ(it->nvlink_links, r.links) << r.model;
    EXPECT_DOUBLE_EQ(it->nvlink_total_GBps, r.per_direction) << r.model;
    EXPECT_DOUBLE_EQ(it->nvlink_links * it->nvlink_link_GBps, r.per_direction) << r.model;
    EXPECT_DOUBLE_EQ(it->hbm_GBps, r.hbm) << r.model;
  }
}

// The exact line rates: GT/s x payload fraction of the encoding / 8 bits, per lane per direction.
// Rounded figures (63.0 for Gen5 x16, 0.984375 for a Gen3 lane) are not the spec.
TEST(SpecDatabase, PcieIsTheExactEncodedLineRate) {
  EXPECT_DOUBLE_EQ(db().pcie(1, 16)->GBps, 2.5 * 8 / 10 / 8 * 16);      // 4
  EXPECT_DOUBLE_EQ(db().pcie(3, 16)->GBps, 8.0 * 128 / 130 / 8 * 16);   // 15.754
  EXPECT_DOUBLE_EQ(db().pcie(4, 8)->GBps, 16.0 * 128 / 130 / 8 * 8);    // 15.754
  EXPECT_DOUBLE_EQ(db().pcie(4, 16)->GBps, 16.0 * 128 / 130 / 8 * 16);  // 31.508
  EXPECT_DOUBLE_EQ(db().pcie(5, 16)->GBps, 32.0 * 128 / 130 / 8 * 16);  // 63.015
  EXPECT_DOUBLE_EQ(db().pcie(6, 16)->GBps, 64.0 * 242 / 256 / 8 * 16);  // 121 (FLIT)
  EXPECT_NE(db().pcie(5, 16)->GBps, 63.0);
  EXPECT_EQ(db().pcie(5, 16)->name, "PCIe Gen5 x16");
  EXPECT_FALSE(db().pcie(5, 16)->source.empty());
  EXPECT_FALSE(db().pcie(0, 16));
  EXPECT_FALSE(db().pcie(7, 16));
  EXPECT_FALSE(db().pcie(4, 0));
  EXPECT_FALSE(db().pcie(4, 64));
}

TEST(SpecDatabase, NicPortsByRateAndLinkLayer) {
  const auto ndr = db().nic(400, "InfiniBand");
  ASSERT_TRUE(ndr);
  EXPECT_DOUBLE_EQ(ndr->GBps, 50.0);
  EXPECT_NE(ndr->name.find("NDR"), std::string::npos);
  EXPECT_NE(db().nic(200, "InfiniBand", 4)->name.find("HDR"), std::string::npos);
  EXPECT_DOUBLE_EQ(db().nic(200, "InfiniBand")->GBps, 25.0);
  EXPECT_NE(db().nic(800, "infiniband")->name.find("XDR"), std::string::npos);
  EXPECT_DOUBLE_EQ(db().nic(800, "InfiniBand")->GBps, 100.0);
  EXPECT_DOUBLE_EQ(db().nic(100, "Ethernet")->GBps, 12.5);
  EXPECT_DOUBLE_EQ(db().nic(200, "Ethernet")->GBps, 25.0);
  EXPECT_DOUBLE_EQ(db().nic(400, "Ethernet")->GBps, 50.0);
  EXPECT_NE(db().nic(400, "Ethernet")->name.find("RoCE"), std::string::npos);
  EXPECT_FALSE(db().nic(56, "InfiniBand")) << "FDR is not rated: no guess";
}

// A port is named by its width and lane rate: 100 Gb/s is EDR on 4 lanes or HDR100 on 2 HDR lanes,
// 200 Gb/s is HDR on 4 lanes or NDR200 on 2 NDR lanes (sysfs: "100 Gb/sec (2X HDR)").
TEST(SpecDatabase, NicPortsAreNamedByWidthAndRate) {
  std::map<std::pair<double, int>, std::string> names;
  for (const auto& port : db().nic_ports()) {
    if (port.link_layer == "InfiniBand") {
      names[{port.rate_Gbps, port.width}] = port.link.name;
    }
  }
  EXPECT_EQ(names[std::make_pair(100.0, 4)], "InfiniBand EDR (4x EDR)");
  EXPECT_EQ(names[std::make_pair(100.0, 2)], "InfiniBand HDR100 (2x HDR)");
  EXPECT_EQ(names[std::make_pair(200.0, 4)], "InfiniBand HDR (4x HDR)");
  EXPECT_EQ(names[std::make_pair(200.0, 2)], "InfiniBand NDR200 (2x NDR)");
  EXPECT_EQ(names[std::make_pair(400.0, 4)], "InfiniBand NDR (4x NDR)");
  EXPECT_EQ(names[std::make_pair(800.0, 4)], "InfiniBand XDR (4x XDR)");
  for (const auto& [key, name] : names) {
    EXPECT_EQ(name.find(" 4x"), std::string::npos) << name << ": the width goes with the lane rate";
  }
}

TEST(SpecDatabase, NicLookupUsesTheWidthAndDoesNotGuessWithoutIt) {
  EXPECT_EQ(db().nic(100, "InfiniBand", 2)->name, "InfiniBand HDR100 (2x HDR)");
  EXPECT_EQ(db().nic(100, "InfiniBand", 4)->name, "InfiniBand EDR (4x EDR)");
  EXPECT_EQ(db().nic(200, "InfiniBand", 2)->name, "InfiniBand NDR200 (2x NDR)");
  const auto unknown_width = db().nic(100, "InfiniBand");
  ASSERT_TRUE(unknown_width);
  EXPECT_EQ(unknown_width->name, "InfiniBand 100 Gb/s");  // EDR or HDR100: the same 12.5 GB/s
  EXPECT_DOUBLE_EQ(unknown_width->GBps, 12.5);
  EXPECT_EQ(db().nic(400, "InfiniBand")->name, "InfiniBand NDR (4x NDR)");  // only one 400 Gb/s port
  EXPECT_FALSE(db().nic(100, "InfiniBand", 1));
  EXPECT_FALSE(db().nic(25, "Ethernet"));
  EXPECT_FALSE(db().nic(400, "Omni-Path"));
}

// A small valid document; each error test breaks one thing in it.
nlohmann::json minimal_document() {
  return nlohmann::json::parse(R"({
    "schema": "ccbench.hardware", "schema_version": "1.0.0",
    "gpus": [{"model": "X1", "nvml_names": ["NVIDIA X1"], "nvml_names_source": "seen",
              "nvlink_version": 4, "nvlink_links": 2, "nvlink_link_GBps": 25, "nvlink_total_GBps": 50,
              "hbm_GBps": 1000, "pcie_gen": 5, "source": "https://example.org/x1"}],
    "pcie": {"source": "https://pcisig.com", "lanes": [{"gen": 1, "GT_per_s": 2.5, "encoding": [8, 10]},
                                                    {"gen": 2, "GT_per_s": 5, "encoding": [8, 10]}]},
    "nics": [{"name": "IB HDR", "link_layer": "InfiniBand", "rate_Gbps": 200, "GBps": 25, "source": "https://x"}]
  })");
}

std::string parse_error(const nlohmann::json& doc) {
  try {
    static_cast<void>(SpecDatabase::parse(doc.dump()));
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpecDatabase, ParseAcceptsTheMinimalDocument) {
  const SpecDatabase small = SpecDatabase::parse(minimal_document().dump());
  ASSERT_NE(small.find_gpu("nvidia x1"), nullptr);
  EXPECT_DOUBLE_EQ(small.pcie(2, 4)->GBps, 2.0);
  EXPECT_FALSE(small.pcie(3, 16));
}

TEST(SpecDatabase, ParseErrorsNameTheEntryAndTheKey) {
  auto doc = minimal_document();
  doc["gpus"][0].erase("source");
  EXPECT_NE(parse_error(doc).find(R"(/gpus/0: missing required key "source")"), std::string::npos) << parse_error(doc);

  doc = minimal_document();
  doc["nics"][0].erase("GBps");
  EXPECT_NE(parse_error(doc).find(R"(/nics/0: missing required key "GBps")"), std::string::npos) << parse_error(doc);

  doc = minimal_document();
  doc["gpus"][0]["nvlink_total_GBps"] = 60;
  EXPECT_NE(parse_error(doc).find("nvlink_total_GBps"), std::string::npos) << parse_error(doc);

  doc = minimal_document();
  doc["gpus"][0]["nvml_names"] = nlohmann::json::array({"NVIDIA (X1"});
  EXPECT_NE(parse_error(doc).find("not a valid regular expression"), std::string::npos) << parse_error(doc);

  doc = minimal_document();
  doc["gpus"][0]["hbm_gbps"] = 1;  // misspelt key
  EXPECT_NE(parse_error(doc).find("/gpus/0/hbm_gbps: unknown key"), std::string::npos) << parse_error(doc);

  doc = minimal_document();
  doc["gpus"][0]["source"] = "";
  EXPECT_NE(parse_error(doc).find("/gpus/0/source: expected a string of at least 1 characters"), std::string::npos)
      << parse_error(doc);
  doc["gpus"][0]["source"] = " \t";  // the schema's non-empty string; the reader's rule: not blank
  EXPECT_NE(parse_error(doc).find(R"(gpus[0] "X1": "source" must be a non-empty string)"), std::string::npos)
      << parse_error(doc);

  doc = minimal_document();
  doc["gpus"].push_back(doc["gpus"][0]);
  EXPECT_NE(parse_error(doc).find("appears twice"), std::string::npos);

  doc = minimal_document();
  doc["pcie"]["lanes"][1]["gen"] = 3;
  EXPECT_NE(parse_error(doc).find("pcie.lanes[1]"), std::string::npos);

  doc = minimal_document();
  doc["pcie"]["lanes"][0]["encoding"] = nlohmann::json::array({130, 128});
  EXPECT_NE(parse_error(doc).find("pcie.lanes[0]: \"encoding\""), std::string::npos) << parse_error(doc);

  doc = minimal_document();
  doc["schema"] = "something.else";
  EXPECT_NE(parse_error(doc).find("schema"), std::string::npos);

  EXPECT_THROW(static_cast<void>(SpecDatabase::parse("{not json")), SpecError);
  EXPECT_THROW(static_cast<void>(SpecDatabase::parse("[]")), std::runtime_error);
}

}  // namespace
}  // namespace ccbench::topo
