// Public Status type of librpmp (the same Status the whole project uses).
#pragma once
#include "common/status.h"
