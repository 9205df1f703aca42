package io.strata.common.proto;

import io.strata.common.proto.ProtoLock.EnumType;
import io.strata.common.proto.ProtoLock.Field;
import io.strata.common.proto.ProtoLock.Message;
import io.strata.common.proto.ProtoLock.Method;
import io.strata.common.proto.ProtoLock.NumberRange;
import io.strata.common.proto.ProtoLock.Service;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Compares the current protocol with a released lock. Everything the lock names must still be there
 * with the same number, name, type, label and streaming; additions are free. Changes listed in
 * {@link AllowedChanges} are not reported; its lines that allow nothing are, so the list holds
 * exactly the deliberate breaks since the release.
 */
final class ProtoLockCheck {
  /** The outcome: what is incompatible and which allow-list lines are stale. */
  record Result(
      String release,
      List<Incompatibility> incompatibilities,
      List<AllowedChanges.Entry> unusedAllowances) {
    boolean passed() {
      return incompatibilities.isEmpty() && unusedAllowances.isEmpty();
    }

    /** A report that lists every problem and the line that would allow it. */
    String describe(String lockFile, String allowListFile) {
      StringBuilder out = new StringBuilder();
      if (!incompatibilities.isEmpty()) {
        out.append("The protocol changed incompatibly since release ")
            .append(release)
            .append(" (")
            .append(lockFile)
            .append("):\n");
        incompatibilities.forEach(change -> out.append("  ").append(change).append('\n'));
        out.append("Peers and journals of ")
            .append(release)
            .append(" rely on these. Undo the")
            .append(" change, or, if it is a deliberate break, add a line for each to ")
            .append(allowListFile)
            .append(" (see docs/proto-compatibility.md):\n");
        incompatibilities.forEach(
            change -> out.append("  ").append(change.allowLine()).append('\n'));
      }
      if (!unusedAllowances.isEmpty()) {
        out.append("Lines of ")
            .append(allowListFile)
            .append(" that allow no change; remove")
            .append(" them:\n");
        unusedAllowances.forEach(entry -> out.append("  ").append(entry).append('\n'));
      }
      return out.toString();
    }
  }

  private final ProtoLock locked;
  private final ProtoLock current;
  private final AllowedChanges allowed;
  private final List<Incompatibility> found = new ArrayList<>();
  private final Set<AllowedChanges.Entry> used = new LinkedHashSet<>();

  private ProtoLockCheck(ProtoLock locked, ProtoLock current, AllowedChanges allowed) {
    this.locked = locked;
    this.current = current;
    this.allowed = allowed;
  }

  static Result compare(ProtoLock locked, ProtoLock current, AllowedChanges allowed) {
    ProtoLockCheck check = new ProtoLockCheck(locked, current, allowed);
    locked.messages().values().forEach(check::compareMessage);
    locked.enums().values().forEach(check::compareEnum);
    locked.services().values().forEach(check::compareService);
    List<Incompatibility> errors = new ArrayList<>();
    for (Incompatibility change : check.found) {
      Optional<AllowedChanges.Entry> allowing = allowed.allowing(change);
      allowing.ifPresentOrElse(check.used::add, () -> errors.add(change));
    }
    List<AllowedChanges.Entry> unused = new ArrayList<>(allowed.entries());
    unused.removeAll(check.used);
    return new Result(locked.release(), errors, unused);
  }

  private void report(String subject, String change) {
    found.add(new Incompatibility(subject, change));
  }

  /** The current declaration of a released message or enum, following allowed renames. */
  private <T> T currentType(String releasedName, Map<String, T> currentTypes, String kind) {
    String name = allowed.currentTypeName(releasedName);
    T type = currentTypes.get(name);
    if (type == null) {
      report(
          releasedName,
          kind
              + " removed"
              + (name.equals(releasedName)
                  ? ""
                  : " (renamed to " + name + ", which does not exist)"));
    } else if (!name.equals(releasedName)) {
      allowed.typeRename(releasedName).ifPresent(used::add);
    }
    return type;
  }

  private void compareMessage(Message was) {
    Message now = currentType(was.name, current.messages(), "message");
    if (now == null) {
      return;
    }
    Map<String, Field> nowByName = new HashMap<>();
    now.fields.values().forEach(field -> nowByName.put(field.name(), field));
    for (Field old : was.fields.values()) {
      String subject = was.name + " field " + old.number();
      Field atNumber = now.fields.get(old.number());
      Field sameName = nowByName.get(old.name());
      if (atNumber == null) {
        report(
            subject,
            sameName != null
                ? "field '" + old.name() + "' renumbered to " + sameName.number()
                : "field '" + old.name() + "' removed; if for good, reserve its number and name");
        continue;
      }
      if (!atNumber.name().equals(old.name())) {
        if (sameName != null) {
          report(
              subject,
              "field '"
                  + old.name()
                  + "' renumbered to "
                  + sameName.number()
                  + ", and number "
                  + old.number()
                  + " now belongs to '"
                  + atNumber.name()
                  + "'");
          continue;
        }
        found.add(
            new Incompatibility(
                subject,
                "field '" + old.name() + "' renamed to '" + atNumber.name() + "'",
                AllowedChanges.memberRename(
                    was.name, "field", old.number(), old.name(), atNumber.name())));
      }
      String oldType = currentTypeString(old.type());
      if (!oldType.equals(atNumber.type())) {
        report(
            subject,
            "field '"
                + atNumber.name()
                + "' type changed from "
                + old.type()
                + " to "
                + atNumber.type());
      }
      if (!old.label().equals(atNumber.label())) {
        report(
            subject,
            "field '"
                + atNumber.name()
                + "' changed from "
                + old.label()
                + " to "
                + atNumber.label());
      }
    }
    for (Field field : now.fields.values()) {
      if (was.fields.containsKey(field.number())) {
        continue;
      }
      String subject = was.name + " field " + field.number();
      if (was.reservedNumbers.stream().anyMatch(range -> range.contains(field.number()))) {
        report(
            subject,
            "field '"
                + field.name()
                + "' takes number "
                + field.number()
                + ", reserved in "
                + locked.release());
      }
      if (was.reservedNames.contains(field.name())) {
        report(
            subject, "field '" + field.name() + "' takes a name reserved in " + locked.release());
      }
    }
  }

  /** A released field type in current names: renamed types, also as map values. */
  private String currentTypeString(String releasedType) {
    if (releasedType.startsWith("map<") && releasedType.endsWith(">")) {
      String[] keyValue = releasedType.substring(4, releasedType.length() - 1).split(",", 2);
      return "map<" + keyValue[0] + "," + allowed.currentTypeName(keyValue[1]) + ">";
    }
    return allowed.currentTypeName(releasedType);
  }

  private void compareEnum(EnumType was) {
    EnumType now = currentType(was.name, current.enums(), "enum");
    if (now == null) {
      return;
    }
    for (Map.Entry<String, Integer> old : was.values.entrySet()) {
      String name = old.getKey();
      int number = old.getValue();
      String subject = was.name + " value " + number;
      Integer nowNumber = now.values.get(name);
      if (nowNumber != null) {
        if (nowNumber != number) {
          report(subject, "value " + name + " renumbered to " + nowNumber);
        }
        continue;
      }
      Optional<String> newName =
          now.values.entrySet().stream()
              .filter(
                  value -> value.getValue() == number && !was.values.containsKey(value.getKey()))
              .map(Map.Entry::getKey)
              .findFirst();
      if (newName.isPresent()) {
        found.add(
            new Incompatibility(
                subject,
                "value " + name + " renamed to " + newName.get(),
                AllowedChanges.memberRename(was.name, "value", number, name, newName.get())));
      } else {
        report(subject, "value " + name + " removed; if for good, reserve its number and name");
      }
    }
    for (Map.Entry<String, Integer> value : now.values.entrySet()) {
      String name = value.getKey();
      int number = value.getValue();
      if (was.values.containsKey(name)) {
        continue;
      }
      String subject = was.name + " value " + number;
      for (NumberRange range : was.reservedNumbers) {
        if (range.contains(number)) {
          report(
              subject,
              "value " + name + " takes number " + number + ", reserved in " + locked.release());
        }
      }
      if (was.reservedNames.contains(name)) {
        report(subject, "value " + name + " takes a name reserved in " + locked.release());
      }
    }
  }

  /** Services are not followed through renames: their names are part of every call's path. */
  private void compareService(Service was) {
    Service now = current.services().get(was.name);
    if (now == null) {
      report(was.name, "service removed");
      return;
    }
    for (Method old : was.methods.values()) {
      String subject = was.name + " rpc " + old.name();
      Method method = now.methods.get(old.name());
      if (method == null) {
        report(subject, "method removed");
        continue;
      }
      if (!Objects.equals(allowed.currentTypeName(old.request()), method.request())) {
        report(subject, "request type changed from " + old.request() + " to " + method.request());
      }
      if (!Objects.equals(allowed.currentTypeName(old.response()), method.response())) {
        report(
            subject, "response type changed from " + old.response() + " to " + method.response());
      }
      if (old.clientStreaming() != method.clientStreaming()) {
        report(
            subject,
            "request streaming changed from "
                + old.clientStreaming()
                + " to "
                + method.clientStreaming());
      }
      if (old.serverStreaming() != method.serverStreaming()) {
        report(
            subject,
            "response streaming changed from "
                + old.serverStreaming()
                + " to "
                + method.serverStreaming());
      }
    }
  }
}
