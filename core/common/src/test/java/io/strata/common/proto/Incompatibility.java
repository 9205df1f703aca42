package io.strata.common.proto;

/**
 * One change of a locked contract that old peers, or journals they wrote, would not survive.
 *
 * @param subject what changed, in the lock's names: {@code strata.Foo}, {@code strata.Foo field 7},
 *     {@code strata.Foo value 7} or {@code strata.Foo rpc Bar}
 * @param change what happened to it, naming the field, value or method
 * @param rename for a field or value that only changed its name, the rename as an allowed-changes
 *     line states it ({@code strata.Foo field 3 name -> title}); else null
 */
record Incompatibility(String subject, String change, String rename) {
  Incompatibility(String subject, String change) {
    this(subject, change, null);
  }

  /** The allowed-changes line that would make this change deliberate. */
  String allowLine() {
    return rename != null ? "rename " + rename : "break " + subject + ": <why this is safe>";
  }

  @Override
  public String toString() {
    return subject + ": " + change;
  }
}
