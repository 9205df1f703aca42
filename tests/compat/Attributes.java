import com.google.protobuf.ByteString;
import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.client.SetAttributeOptions;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sets and lists what the `strata fs` commands of release 0.1.0 cannot: mode, owner, group and
 * extended attributes (FileSystem.setAttribute, which the FUSE mount and the S3 proxy use).
 * Run with Java's source launcher on the classpath of the release's shell module, configured
 * by -D options like every Strata command (make-golden-layout1.sh does):
 *
 * <pre>
 *   java -cp CLASSPATH -Dstrata... Attributes.java set PATH [mode=0750] [owner=U] [group=G]
 *       [xattr.NAME=VALUE]...
 *   java -cp CLASSPATH -Dstrata... Attributes.java xattrs
 * </pre>
 *
 * {@code xattrs} prints every extended attribute of the namespace, one a line:
 * {@code path<TAB>name<TAB>value} (values in UTF-8), sorted by path and name.
 */
public class Attributes {
  public static void main(String[] args) throws Exception {
    try (FileSystem fs = FileSystem.connect(StrataConfig.load())) {
      switch (args[0]) {
        case "set" -> set(fs, args);
        case "xattrs" -> printXattrs(fs);
        default -> throw new IllegalArgumentException("unknown command " + args[0]);
      }
    }
  }

  private static void set(FileSystem fs, String[] args) throws Exception {
    SetAttributeOptions options = SetAttributeOptions.defaults();
    for (int i = 2; i < args.length; i++) {
      String key = args[i].substring(0, args[i].indexOf('='));
      String value = args[i].substring(args[i].indexOf('=') + 1);
      if (key.equals("mode")) {
        options = options.mode(Integer.parseInt(value, 8));
      } else if (key.equals("owner")) {
        options = options.owner(value);
      } else if (key.equals("group")) {
        options = options.group(value);
      } else if (key.startsWith("xattr.")) {
        options = options.xattr(key.substring("xattr.".length()),
            ByteString.copyFrom(value, StandardCharsets.UTF_8));
      } else {
        throw new IllegalArgumentException("unknown attribute " + key);
      }
    }
    fs.setAttribute(args[1], options);
  }

  private static void printXattrs(FileSystem fs) throws Exception {
    Map<String, Map<String, ByteString>> found = new TreeMap<>();
    Deque<String> dirs = new ArrayDeque<>();
    dirs.push("/");
    while (!dirs.isEmpty()) {
      try (CloseableIterator<FileInfo> it = fs.listStatus(dirs.pop())) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          if (f.getDirectory()) {
            dirs.push(f.getPath());
          }
          if (f.getXattrsCount() > 0) {
            found.put(f.getPath(), new TreeMap<>(f.getXattrsMap()));
          }
        }
      }
    }
    found.forEach((path, xattrs) -> xattrs.forEach((name, value) ->
        System.out.println(path + "\t" + name + "\t" + value.toStringUtf8())));
  }
}
