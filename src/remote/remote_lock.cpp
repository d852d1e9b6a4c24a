#include "remote/remote_lock.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/nonce.h"
#include "core/system_info.h"

namespace archbuild {

namespace {

struct LockHolder {
  std::string host, owner;
  long pid = 0;
  long long renewed = 0;  // seconds since the epoch
};

LockHolder parse_holder(const std::string& text) {
  LockHolder holder;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    if (word == "host")
      in >> holder.host;
    else if (word == "pid")
      in >> holder.pid;
    else if (word == "renewed")
      in >> holder.renewed;
    else if (word == "owner")
      in >> holder.owner;
  }
  return holder;
}

long long now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool process_gone_here(const LockHolder& holder) {
  if (holder.host != host_name() || holder.pid <= 0) return false;
  return ::kill(static_cast<pid_t>(holder.pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

RemoteLock::RemoteLock(S3Client& client, std::string path, std::chrono::seconds stale_after)
    : client_(client), path_(std::move(path)), stale_after_(stale_after) {
  owner_ = random_nonce();
}

RemoteLock::~RemoteLock() {
  try {
    release();
  } catch (const std::exception& error) {
    log::warning("could not release the lock {}: {}", client_.url(path_), error.what());
  }
}

std::string RemoteLock::body() const {
  return "archbuild lock 1\nhost " + host_name() + "\npid " + std::to_string(getpid()) + "\nrenewed " +
         std::to_string(now_seconds()) + "\nowner " + owner_ + "\n";
}

void RemoteLock::acquire() {
  int pause_ms = 250;
  std::string waited_for;
  // A lock refused as present (412) yet absent when read (404) was released
  // meanwhile, once or twice; every time means the server keeps something
  // else at that name (an object under LOCK/ makes SeaweedFS answer so).
  int refused_but_absent = 0;
  constexpr int kRefusedButAbsentLimit = 8;
  while (true) {
    if (pending_interrupt()) throw UserError(ExitCode::interrupted, "interrupted while waiting for " + path_);
    if (client_.put_text(path_, body(), "text/plain", WriteCondition::if_absent())) break;
    auto held = client_.get_text(path_, 4096);
    if (!held) {
      if (++refused_but_absent == kRefusedButAbsentLimit)
        fail_environment("cannot take the lock " + client_.url(path_) + ": the server refused to create it " +
                         std::to_string(kRefusedButAbsentLimit) +
                         " times as already there, yet has no object of that name (is there an object under " + path_ +
                         "/? remove it)");
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * refused_but_absent));
      continue;  // released meanwhile
    }
    refused_but_absent = 0;
    const auto holder = parse_holder(held->text);
    // A renewal time further ahead than the stale time is no clock skew: garbage, stale.
    const auto age = now_seconds() - holder.renewed;
    const bool stale = process_gone_here(holder) || age > stale_after_.count() || -age > stale_after_.count();
    if (holder.owner == owner_) break;  // our own write, whose answer was lost and retried
    if (stale) {
      log::verbose("taking over the stale lock {} of {} pid {}", client_.url(path_), holder.host, holder.pid);
      if (client_.put_text(path_, body(), "text/plain", WriteCondition::if_unchanged(held->etag))) break;
      continue;  // another taker won; look again
    }
    const auto who = holder.host + " pid " + std::to_string(holder.pid);
    if (who != waited_for) {
      log::warning("waiting for {} (held by {}; stale after {} s without renewal)", client_.url(path_), who,
                   stale_after_.count());
      waited_for = who;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    pause_ms = std::min(pause_ms * 2, 4000);
  }
  auto mine = client_.head(path_);
  etag_ = mine ? mine->etag : std::string("*");
}

bool RemoteLock::renew() {
  if (etag_.empty()) return false;
  if (!client_.put_text(path_, body(), "text/plain", WriteCondition::if_unchanged(etag_))) {
    etag_.clear();
    return false;
  }
  auto mine = client_.head(path_);
  if (!mine || parse_holder(client_.get_text(path_, 4096).value_or(RemoteText{}).text).owner != owner_) {
    etag_.clear();
    return false;
  }
  etag_ = mine->etag;
  return true;
}

void RemoteLock::release() {
  if (etag_.empty()) return;
  // Only our own lock goes: one taken over meanwhile is the taker's.
  etag_.clear();
  auto held = client_.get_text(path_, 4096, true);
  if (held && parse_holder(held->text).owner == owner_) client_.remove(path_, true);
}

}  // namespace archbuild
