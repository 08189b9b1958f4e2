// -R's gate (issue 27): which NCCL, built against and loaded, may run local registration and symmetric windows.
#include "ccbench/registration.hpp"

#include <gtest/gtest.h>

namespace ccbench {
namespace {

constexpr int k2_18 = 21805;
constexpr int k2_19 = 21900;
constexpr int k2_26 = 22605;
constexpr int k2_27 = 22703;
constexpr int k2_28 = 22809;

TEST(Registration, NamesAndParsing) {
  EXPECT_EQ(name(Registration::Symmetric), "symmetric");
  EXPECT_EQ(parse_registration("0"), Registration::None);
  EXPECT_EQ(parse_registration("1"), Registration::Local);
  EXPECT_EQ(parse_registration("2"), Registration::Symmetric);
  EXPECT_EQ(parse_registration("symmetric"), Registration::Symmetric);
  EXPECT_FALSE(parse_registration("3"));
  EXPECT_FALSE(parse_registration(""));
}

TEST(Registration, NoneRunsEverywhere) { EXPECT_EQ(registration_refusal(Registration::None, 21400, 21400), ""); }

TEST(Registration, SymmetricNeeds2_27LoadedAndBuilt) {
  EXPECT_EQ(registration_refusal(Registration::Symmetric, k2_28, k2_28), "");
  EXPECT_EQ(registration_refusal(Registration::Symmetric, k2_28, k2_27), "");
  // built against 2.28, an older library loaded at run time (LD_LIBRARY_PATH, a pip wheel): one line, the version
  EXPECT_EQ(registration_refusal(Registration::Symmetric, k2_28, k2_26),
            "-R 2: symmetric windows (ncclCommWindowRegister) need NCCL 2.27.0 or later, and the NCCL library loaded "
            "(on the oldest rank) is 2.26.5");
  EXPECT_EQ(registration_refusal(Registration::Symmetric, k2_26, k2_28),
            "-R 2: symmetric windows (ncclCommWindowRegister) need NCCL 2.27.0 or later, and this build's nccl.h is "
            "2.26.5; rebuild against a newer NCCL");
}

TEST(Registration, LocalNeeds2_19) {
  EXPECT_EQ(registration_refusal(Registration::Local, k2_28, k2_19), "");
  EXPECT_EQ(registration_refusal(Registration::Local, k2_28, k2_26), "");  // 2.26 registers, it has no windows
  const auto why = registration_refusal(Registration::Local, k2_28, k2_18);
  EXPECT_NE(why.find("-R 1: registered buffers (ncclMemAlloc, ncclCommRegister) need NCCL 2.19.0"), std::string::npos)
      << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace ccbench
