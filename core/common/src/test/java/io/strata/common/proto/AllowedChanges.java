package io.strata.common.proto;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The incompatible changes made on purpose since the lock, one a line, so that each is reviewed
 * where it is made. Names are those of the lock (the released names). Lines:
 *
 * <pre>
 * rename strata.FileInfo field 3 name -&gt; title     a field keeps its number and type
 * rename strata.WorkerState value 2 OLD -&gt; NEW     an enum value keeps its number
 * rename strata.OldName -&gt; strata.NewName        a message or enum (and what is nested in it)
 * break strata.FileInfo field 7: REASON           anything about that field, value or method
 * break strata.Foo: REASON                        a removed message, enum or service
 * break strata.FileSystemMaster rpc Foo: REASON
 * break strata.WorkerState value 3: REASON
 * </pre>
 *
 * A rename allows only the new name: a type or label change of the same field is still an error. A
 * break allows every change of its subject and needs a reason.
 */
final class AllowedChanges {
  /** One line of the list, reported when it allows nothing any more. */
  record Entry(int line, String text) {
    @Override
    public String toString() {
      return "line " + line + ": " + text;
    }
  }

  private static final Pattern BREAK = Pattern.compile("break\\s+([^:]+?)\\s*:\\s*(\\S.*)");
  private static final Pattern SUBJECT = Pattern.compile("[\\w.]+( (field|value) \\d+| rpc \\w+)?");
  private static final Pattern MEMBER_RENAME =
      Pattern.compile("rename\\s+([\\w.]+)\\s+(field|value)\\s+(\\d+)\\s+(\\w+)\\s*->\\s*(\\w+)");
  private static final Pattern TYPE_RENAME =
      Pattern.compile("rename\\s+([\\w.]+)\\s*->\\s*([\\w.]+)");

  private final List<Entry> entries = new ArrayList<>();

  /** By subject: {@code strata.Foo field 7}. */
  private final Map<String, Entry> breaks = new LinkedHashMap<>();

  /** By rename: {@code strata.Foo field 3 name -> title}. */
  private final Map<String, Entry> memberRenames = new LinkedHashMap<>();

  /** Released type name to current type name. */
  private final Map<String, String> typeRenames = new LinkedHashMap<>();

  private final Map<String, Entry> typeRenameEntries = new LinkedHashMap<>();

  private AllowedChanges() {}

  static AllowedChanges none() {
    return new AllowedChanges();
  }

  /**
   * Reads the list; {@code source} names it in errors.
   *
   * @throws IllegalArgumentException naming a line that is not one of the forms above
   */
  static AllowedChanges parse(String source, String text) {
    AllowedChanges allowed = new AllowedChanges();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      Entry entry = new Entry(i + 1, line);
      Matcher m;
      if ((m = BREAK.matcher(line)).matches()) {
        String subject = m.group(1).replaceAll("\\s+", " ");
        if (!SUBJECT.matcher(subject).matches()) {
          throw new IllegalArgumentException(
              source
                  + " line "
                  + (i + 1)
                  + ": '"
                  + subject
                  + "' is not NAME, NAME field N, NAME value N or NAME rpc METHOD: "
                  + line);
        }
        allowed.breaks.put(subject, entry);
      } else if ((m = MEMBER_RENAME.matcher(line)).matches()) {
        allowed.memberRenames.put(
            memberRename(
                m.group(1), m.group(2), Integer.parseInt(m.group(3)), m.group(4), m.group(5)),
            entry);
      } else if ((m = TYPE_RENAME.matcher(line)).matches()) {
        allowed.typeRenames.put(m.group(1), m.group(2));
        allowed.typeRenameEntries.put(m.group(1), entry);
      } else {
        throw new IllegalArgumentException(
            source
                + " line "
                + (i + 1)
                + ": expected 'break SUBJECT: REASON' or 'rename ... -> ...': "
                + line);
      }
      allowed.entries.add(entry);
    }
    return allowed;
  }

  /** The canonical text of a field or enum value rename, as {@link Incompatibility} names it. */
  static String memberRename(String owner, String kind, int number, String from, String to) {
    return owner + " " + kind + " " + number + " " + from + " -> " + to;
  }

  List<Entry> entries() {
    return entries;
  }

  /** The line that allows {@code change}, if any. */
  Optional<Entry> allowing(Incompatibility change) {
    Entry entry = breaks.get(change.subject());
    if (entry == null && change.rename() != null) {
      entry = memberRenames.get(change.rename());
    }
    return Optional.ofNullable(entry);
  }

  /**
   * The current name of a released message or enum: renamed itself, or nested in a renamed type, or
   * unchanged.
   */
  String currentTypeName(String releasedName) {
    for (Map.Entry<String, String> rename : typeRenames.entrySet()) {
      String from = rename.getKey();
      if (releasedName.equals(from) || releasedName.startsWith(from + ".")) {
        return rename.getValue() + releasedName.substring(from.length());
      }
    }
    return releasedName;
  }

  /** The line renaming the released type {@code releasedName} itself, if any. */
  Optional<Entry> typeRename(String releasedName) {
    return Optional.ofNullable(typeRenameEntries.get(releasedName));
  }
}
