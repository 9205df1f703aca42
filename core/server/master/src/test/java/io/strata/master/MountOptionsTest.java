package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.MountInfo;
import io.strata.proto.MountRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mount options: Strata's own are validated and kept from stores; secrets are masked. */
class MountOptionsTest {
  @TempDir Path home;
  @TempDir Path store;

  private static final Map<String, String> OPTIONS =
      Map.of(
          "s3.access.key", "AKIDEXAMPLE",
          "s3.secret.key", "wJalrXUtnFEMI",
          "hdfs.kerberos.keytab", "/etc/krb5.keytab",
          "proxy.password", "hunter2",
          "session.token", "tok",
          "gcs.credentials.json", "{}",
          "region", "eu-west-1",
          "sync.interval", "30s");

  @BeforeEach
  void reset() {
    CountingUnderFileSystem.reset();
    CountingUnderFileSystem.OPENED_WITH.clear();
  }

  private static MountInfo second(TestMaster m, boolean includeSecrets, boolean storeOnly) {
    return m.fs
        .listMounts(
            ListMountsRequest.newBuilder()
                .setIncludeSecrets(includeSecrets)
                .setStoreOptionsOnly(storeOnly)
                .build())
        .getMounts(1);
  }

  @Test
  void listMountsMasksSecretsUnlessAskedForThemAndTheJournalKeepsThem() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      MountInfo made =
          m.fs
              .mount(
                  MountRequest.newBuilder()
                      .setPath("/s")
                      .setUfsUri("counting://" + store)
                      .putAllOptions(OPTIONS)
                      .build())
              .getMount();
      assertEquals("******", made.getOptionsOrThrow("s3.secret.key"));

      Map<String, String> shown = second(m, false, false).getOptionsMap();
      assertEquals("AKIDEXAMPLE", shown.get("s3.access.key"), "an access key is an id");
      assertEquals("eu-west-1", shown.get("region"));
      assertEquals("30s", shown.get("sync.interval"));
      for (String secret :
          new String[] {
            "s3.secret.key",
            "hdfs.kerberos.keytab",
            "proxy.password",
            "session.token",
            "gcs.credentials.json"
          }) {
        assertEquals("******", shown.get(secret), secret);
      }
      assertEquals(OPTIONS, second(m, true, false).getOptionsMap());

      Map<String, String> forStore = second(m, true, true).getOptionsMap();
      assertFalse(forStore.containsKey("sync.interval"));
      assertEquals("wJalrXUtnFEMI", forStore.get("s3.secret.key"));
      // The store itself never sees Strata's own option.
      assertFalse(CountingUnderFileSystem.OPENED_WITH.isEmpty());
      for (Map<String, String> opened : CountingUnderFileSystem.OPENED_WITH) {
        assertFalse(opened.containsKey("sync.interval"), opened.toString());
        assertEquals("wJalrXUtnFEMI", opened.get("s3.secret.key"));
      }
    }
    try (TestMaster again = TestMaster.start(home)) {
      assertEquals(OPTIONS, second(again, true, false).getOptionsMap());
      assertEquals("******", second(again, false, false).getOptionsMap().get("s3.secret.key"));
    }
  }

  @Test
  void badSyncIntervalOptionIsRefusedAtMount() throws Exception {
    Files.createDirectories(store.resolve("d"));
    try (TestMaster m = TestMaster.start(home)) {
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "bad option sync.interval: 'soon' is not a sync interval: expected never, always or a"
              + " duration such as 30s",
          () ->
              m.fs.mount(
                  MountRequest.newBuilder()
                      .setPath("/bad")
                      .setUfsUri("file://" + store)
                      .putOptions("sync.interval", "soon")
                      .build()));
      assertEquals(1, m.fs.listMounts(ListMountsRequest.getDefaultInstance()).getMountsCount());
      // A good one is taken by a local store, which takes no options of its own.
      m.fs.mount(
          MountRequest.newBuilder()
              .setPath("/good")
              .setUfsUri("file://" + store)
              .putOptions("sync.interval", "never")
              .build());
      assertTrue(m.stat("/good/d").getDirectory());
    }
  }
}
