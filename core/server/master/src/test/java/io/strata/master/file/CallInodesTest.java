package io.strata.master.file;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.master.journal.CallIdentity;
import org.junit.jupiter.api.Test;

class CallInodesTest {
  @Test
  void anInodeCountsAsMadeByTheCallThatMadeItOnly() {
    CallInodes calls = new CallInodes();
    CallIdentity call = new CallIdentity("client-a", 7);
    calls.record(call, 42);
    assertTrue(calls.madeBy(call, 42));
    assertTrue(calls.madeBy(new CallIdentity("client-a", 7), 42), "the same call, as a retry");
    assertFalse(calls.madeBy(call, 43), "another inode");
    assertFalse(calls.madeBy(new CallIdentity("client-a", 8), 42), "another call of the client");
    assertFalse(calls.madeBy(new CallIdentity("client-b", 7), 42), "another client");
    calls.record(null, 44);
    assertFalse(calls.madeBy(null, 44), "a change of no client call is never a retry");
  }
}
