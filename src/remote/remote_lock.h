#pragma once

#include <chrono>
#include <string>

#include "remote/s3_client.h"

namespace archbuild {

// A lock held as one object in the bucket, for machines that share nothing
// but the bucket. Taking it is a conditional write (If-None-Match: *): of
// two pushers exactly one creates the object. It records host, pid and when
// it was last renewed; it is stale when its process on this host is gone, or
// when it has not been renewed for `stale_after`. A stale lock is taken over
// with If-Match on the ETag read, so of two takers only one wins. The holder
// renews it (If-Match on its own ETag) before each step that must not
// overlap another holder; a renewal that fails means it was taken over
// meanwhile, and the step is not done.
class RemoteLock {
 public:
  RemoteLock(S3Client& client, std::string path, std::chrono::seconds stale_after);
  ~RemoteLock();  // releases it, unless lost
  RemoteLock(const RemoteLock&) = delete;
  RemoteLock& operator=(const RemoteLock&) = delete;

  // Waits while another live holder has it (at most `stale_after` past its
  // last renewal, then takes it over); says whom it waited for in `-v`.
  void acquire();
  // False when another pusher took it over: the caller must stop.
  bool renew();
  void release();
  const std::string& path() const { return path_; }

 private:
  std::string body() const;
  S3Client& client_;
  std::string path_;
  std::chrono::seconds stale_after_;
  std::string etag_;  // ours while held; empty when not held
  std::string owner_;
};

}  // namespace archbuild
