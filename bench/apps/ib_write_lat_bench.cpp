#include "bench_main.hpp"

int main(int argc, char** argv) { return ccbench::bench_main(ccbench::Collective::IbWriteLat, argc, argv); }
