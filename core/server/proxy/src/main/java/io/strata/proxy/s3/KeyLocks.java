package io.strata.proxy.s3;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Serialises writers of one key within this proxy: a PUT, a copy or a multipart completion holds
 * its key's lock from creating the file to completing it. Two concurrent uploads of a key then end
 * one after the other, the later one's object replacing the earlier, never a file whose namespace
 * entry and under-store bytes come from different uploads. Locks are striped by path hash (a fixed,
 * small number of locks), so unrelated keys rarely wait.
 */
final class KeyLocks {
  private final ReentrantLock[] stripes;

  KeyLocks(int stripes) {
    this.stripes = new ReentrantLock[stripes];
    for (int i = 0; i < stripes; i++) {
      this.stripes[i] = new ReentrantLock();
    }
  }

  /** Locks the path's stripe; close the result to unlock. */
  Held lock(String path) {
    ReentrantLock l = stripes[Math.floorMod(path.hashCode(), stripes.length)];
    l.lock();
    return l::unlock;
  }

  /** A held lock. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }
}
