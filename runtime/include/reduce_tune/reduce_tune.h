// Everything a program needs: #include <reduce_tune/reduce_tune.h>
#pragma once

#include "reduce_tune/config.h"
#include "reduce_tune/context.h"
#include "reduce_tune/error.h"
#include "reduce_tune/log.h"
#include "reduce_tune/reduce.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"
