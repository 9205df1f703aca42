package io.strata.shell;

/** A process that fails at start-up, as a master with a bad configuration would. */
public final class FailingMain {
  private FailingMain() {}

  public static void main(String[] args) {
    System.err.println("Cannot start the master: port in use");
    System.exit(3);
  }
}
