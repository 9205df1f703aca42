package io.strata.common.conf;

import java.util.Locale;

/**
 * Renders docs/configuration.md from {@link ConfigRegistry}, so the documented keys, types and
 * defaults can never drift from the code. A unit test fails when the committed file differs;
 * regenerate it with {@code java -cp core/common/target/classes io.strata.common.conf.ConfigDocs}
 * (or run {@code bin/gen-docs}).
 */
public final class ConfigDocs {
  private ConfigDocs() {}

  public static String render() {
    StringBuilder out = new StringBuilder();
    out.append("# Configuration keys\n\n")
        .append(
            "<!-- Generated from the key classes by io.strata.common.conf.ConfigDocs;"
                + " edit the key classes, then run bin/gen-docs. -->\n\n")
        .append("Values come from, lowest precedence first: the defaults below; ")
        .append("`strata-site.properties` in `strata.conf.dir`; environment variables ")
        .append("(upper case, dots become underscores: `strata.master.rpc.port` is ")
        .append("`STRATA_MASTER_RPC_PORT`); Java system properties (`-Dstrata.master.rpc.port=`).")
        .append(" An unknown `strata.*` key or a value of the wrong type stops a process at ")
        .append("start-up with a message naming the key. Values may reference other keys and ")
        .append("`user.home` / `user.name` as `${name}`.\n\n")
        .append("Sizes accept `B`, `KB`/`KiB`, `MB`/`MiB`, `GB`/`GiB`, `TB` (all powers of 1024)")
        .append("; durations accept `ms`, `s`, `min`, `h`, `d` (a bare number is milliseconds).\n");
    String scope = "";
    for (ConfigKey key : ConfigRegistry.all()) {
      String keyScope = key.name().split("\\.")[1];
      if (!keyScope.equals(scope)) {
        scope = keyScope;
        out.append("\n## ")
            .append(scope)
            .append("\n\n")
            .append("| key | type | default | description |\n")
            .append("| --- | --- | --- | --- |\n");
      }
      out.append("| `")
          .append(key.name())
          .append("` | ")
          .append(key.type().name().toLowerCase(Locale.ROOT))
          .append(
              key.unit().isEmpty() || key.unit().equals("bytes") || key.unit().equals("duration")
                  ? ""
                  : " (" + key.unit() + ")")
          .append(" | `")
          .append(key.defaultValue().isEmpty() ? " " : key.defaultValue())
          .append("` | ")
          .append(key.description().replace("|", "\\|"))
          .append(" |\n");
    }
    return out.toString();
  }

  public static void main(String[] args) throws Exception {
    String text = render();
    if (args.length == 1) {
      java.nio.file.Files.writeString(java.nio.file.Path.of(args[0]), text);
    } else {
      System.out.print(text);
    }
  }
}
