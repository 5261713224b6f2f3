#include "layers/wrong_way.h"
#include "CLI/CLI.hpp"
