package io.strata.shell;

/** A process that stands in for a worker in tests of `strata local`: it only waits. */
public final class FakeWorkerMain {
  private FakeWorkerMain() {}

  public static void main(String[] args) throws InterruptedException {
    Object forever = new Object();
    synchronized (forever) {
      while (true) {
        forever.wait();
      }
    }
  }
}
