#include "builder/cli.h"

int main(int argc, char** argv) { return trainpack::builder::run_cli(argc, argv); }
