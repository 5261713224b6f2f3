// A layers/ file that reaches up into python/: the room check must refuse it.
#include "python/version.h"
