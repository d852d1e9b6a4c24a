#pragma once

// A shared cache in a bucket (its layout: remote/s3_bucket_layout.h), one
// header for its users: push, verify and gc, each in its own file pair, and
// the index URL readers use.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cache/cache_push.h"
#include "cache/wheel_store.h"
#include "core/ed25519.h"
#include "remote/s3_bucket_layout.h"
#include "remote/s3_cache_options.h"
#include "remote/s3_client.h"
#include "remote/s3_gc.h"
#include "remote/s3_push.h"
#include "remote/s3_verify.h"
