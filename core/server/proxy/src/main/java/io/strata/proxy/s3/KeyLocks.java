package io.strata.proxy.s3;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Serialises the short steps that decide what is at a key within this proxy: an object taking its
 * key ({@link PendingObject}, the check of its write conditions and the move) and a delete (its
 * If-Match check and the removal). Never held during an upload or across a read of a request body,
 * so writers of one key do not wait on each other's transfers. Locks are striped by path hash (a
 * fixed, small number of locks), so unrelated keys rarely wait.
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
