package io.strata.common.proto;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The wire contract of a set of .proto files, one line per fact: each message field (number, name,
 * type, label), enum value, reserved number or name, and service method. Built from descriptors,
 * written as text and read back; {@code ProtoLockCheck} compares two of them.
 *
 * <p>Names are fully qualified ({@code strata.FileInfo}, nested {@code strata.A.B}). A field's
 * label is {@code singular} (proto3 implicit presence), {@code optional} (explicit presence),
 * {@code repeated} (maps too; their type reads {@code map<K,V>}), {@code required}, or {@code oneof
 * NAME}. Map entry messages are not listed: the map type stands for them.
 *
 * <p>The text is whitespace-separated tokens; {@code #} starts a comment line:
 *
 * <pre>
 * release v0.1.0
 * message strata.FileInfo
 * message strata.FileInfo field 3 name string singular
 * message strata.FileInfo reserved 20-22
 * message strata.FileInfo reserved-name old_name
 * enum strata.WorkerState
 * enum strata.WorkerState value 1 WORKER_LIVE
 * service strata.WorkerService
 * service strata.WorkerService rpc WriteFile strata.WriteFileRequest -> strata.WriteFileResponse stream:true/false
 * </pre>
 */
final class ProtoLock {
  /** A message field as the wire and the generated code see it. */
  record Field(int number, String name, String type, String label) {}

  /** An inclusive range of reserved numbers. */
  record NumberRange(int first, int last) {
    boolean contains(int number) {
      return number >= first && number <= last;
    }

    @Override
    public String toString() {
      return first == last ? Integer.toString(first) : first + "-" + last;
    }

    static NumberRange parse(String text) {
      int dash = text.indexOf('-', 1);
      return dash < 0
          ? new NumberRange(Integer.parseInt(text), Integer.parseInt(text))
          : new NumberRange(
              Integer.parseInt(text.substring(0, dash)),
              Integer.parseInt(text.substring(dash + 1)));
    }
  }

  /** A message: its fields by number and what it reserves. */
  static final class Message {
    final String name;
    final Map<Integer, Field> fields = new LinkedHashMap<>();
    final List<NumberRange> reservedNumbers = new ArrayList<>();
    final Set<String> reservedNames = new LinkedHashSet<>();

    Message(String name) {
      this.name = name;
    }
  }

  /** An enum; values keyed by name, since an alias gives one number several names. */
  static final class EnumType {
    final String name;
    final Map<String, Integer> values = new LinkedHashMap<>();
    final List<NumberRange> reservedNumbers = new ArrayList<>();
    final Set<String> reservedNames = new LinkedHashSet<>();

    EnumType(String name) {
      this.name = name;
    }
  }

  record Method(
      String name,
      String request,
      String response,
      boolean clientStreaming,
      boolean serverStreaming) {}

  static final class Service {
    final String name;
    final Map<String, Method> methods = new LinkedHashMap<>();

    Service(String name) {
      this.name = name;
    }
  }

  private final String release;
  private final Map<String, Message> messages = new LinkedHashMap<>();
  private final Map<String, EnumType> enums = new LinkedHashMap<>();
  private final Map<String, Service> services = new LinkedHashMap<>();

  /** Which file declared each message, enum and service, to group the written text. */
  private final Map<String, String> declaringFile = new LinkedHashMap<>();

  private ProtoLock(String release) {
    this.release = release;
  }

  String release() {
    return release;
  }

  Map<String, Message> messages() {
    return messages;
  }

  Map<String, EnumType> enums() {
    return enums;
  }

  Map<String, Service> services() {
    return services;
  }

  /** The contract of {@code files} (their imports are not included unless listed). */
  static ProtoLock of(String release, List<FileDescriptor> files) {
    ProtoLock lock = new ProtoLock(release);
    for (FileDescriptor file : files) {
      for (Descriptor message : file.getMessageTypes()) {
        lock.addMessage(file.getName(), message);
      }
      for (EnumDescriptor enumType : file.getEnumTypes()) {
        lock.addEnum(file.getName(), enumType);
      }
      for (ServiceDescriptor service : file.getServices()) {
        Service locked = new Service(service.getFullName());
        for (MethodDescriptor method : service.getMethods()) {
          locked.methods.put(
              method.getName(),
              new Method(
                  method.getName(),
                  method.getInputType().getFullName(),
                  method.getOutputType().getFullName(),
                  method.isClientStreaming(),
                  method.isServerStreaming()));
        }
        lock.services.put(locked.name, locked);
        lock.declaringFile.put(locked.name, file.getName());
      }
    }
    return lock;
  }

  private void addMessage(String fileName, Descriptor message) {
    if (message.getOptions().getMapEntry()) {
      return;
    }
    Message locked = new Message(message.getFullName());
    for (FieldDescriptor field : message.getFields()) {
      locked.fields.put(
          field.getNumber(),
          new Field(field.getNumber(), field.getName(), typeOf(field), labelOf(field)));
    }
    for (DescriptorProto.ReservedRange range : message.toProto().getReservedRangeList()) {
      locked.reservedNumbers.add(new NumberRange(range.getStart(), range.getEnd() - 1));
    }
    locked.reservedNames.addAll(message.toProto().getReservedNameList());
    messages.put(locked.name, locked);
    declaringFile.put(locked.name, fileName);
    for (Descriptor nested : message.getNestedTypes()) {
      addMessage(fileName, nested);
    }
    for (EnumDescriptor nested : message.getEnumTypes()) {
      addEnum(fileName, nested);
    }
  }

  private void addEnum(String fileName, EnumDescriptor enumType) {
    EnumType locked = new EnumType(enumType.getFullName());
    for (EnumValueDescriptor value : enumType.getValues()) {
      locked.values.put(value.getName(), value.getNumber());
    }
    for (EnumDescriptorProto.EnumReservedRange range : enumType.toProto().getReservedRangeList()) {
      locked.reservedNumbers.add(new NumberRange(range.getStart(), range.getEnd()));
    }
    locked.reservedNames.addAll(enumType.toProto().getReservedNameList());
    enums.put(locked.name, locked);
    declaringFile.put(locked.name, fileName);
  }

  private static String typeOf(FieldDescriptor field) {
    if (field.isMapField()) {
      Descriptor entry = field.getMessageType();
      return "map<"
          + typeOf(entry.findFieldByName("key"))
          + ","
          + typeOf(entry.findFieldByName("value"))
          + ">";
    }
    return switch (field.getType()) {
      case MESSAGE, GROUP -> field.getMessageType().getFullName();
      case ENUM -> field.getEnumType().getFullName();
      default -> field.getType().name().toLowerCase(Locale.ROOT);
    };
  }

  private static String labelOf(FieldDescriptor field) {
    if (field.isRepeated()) {
      return "repeated";
    }
    if (field.isRequired()) {
      return "required";
    }
    if (field.getRealContainingOneof() != null) {
      return "oneof " + field.getRealContainingOneof().getName();
    }
    boolean proto3 = "proto3".equals(field.getFile().toProto().getSyntax());
    boolean explicitPresence = proto3 ? field.toProto().getProto3Optional() : field.hasPresence();
    return explicitPresence ? "optional" : "singular";
  }

  /** The lock as text, grouped by declaring file; {@link #parse} reads it back. */
  String format() {
    StringBuilder out = new StringBuilder();
    out.append("release ").append(release).append('\n');
    String file = null;
    for (Map.Entry<String, String> declared : declaringFile.entrySet()) {
      if (!declared.getValue().equals(file)) {
        file = declared.getValue();
        out.append('\n');
        if (!file.isEmpty()) {
          out.append("# ").append(file).append('\n');
        }
      }
      String name = declared.getKey();
      if (messages.containsKey(name)) {
        formatMessage(messages.get(name), out);
      } else if (enums.containsKey(name)) {
        formatEnum(enums.get(name), out);
      } else {
        formatService(services.get(name), out);
      }
    }
    return out.toString();
  }

  private static void formatMessage(Message message, StringBuilder out) {
    String prefix = "message " + message.name;
    out.append(prefix).append('\n');
    for (Field field : message.fields.values()) {
      out.append(prefix)
          .append(" field ")
          .append(field.number())
          .append(' ')
          .append(field.name())
          .append(' ')
          .append(field.type())
          .append(' ')
          .append(field.label())
          .append('\n');
    }
    for (NumberRange range : message.reservedNumbers) {
      out.append(prefix).append(" reserved ").append(range).append('\n');
    }
    for (String name : message.reservedNames) {
      out.append(prefix).append(" reserved-name ").append(name).append('\n');
    }
  }

  private static void formatEnum(EnumType enumType, StringBuilder out) {
    String prefix = "enum " + enumType.name;
    out.append(prefix).append('\n');
    for (Map.Entry<String, Integer> value : enumType.values.entrySet()) {
      out.append(prefix)
          .append(" value ")
          .append(value.getValue())
          .append(' ')
          .append(value.getKey())
          .append('\n');
    }
    for (NumberRange range : enumType.reservedNumbers) {
      out.append(prefix).append(" reserved ").append(range).append('\n');
    }
    for (String name : enumType.reservedNames) {
      out.append(prefix).append(" reserved-name ").append(name).append('\n');
    }
  }

  private static void formatService(Service service, StringBuilder out) {
    String prefix = "service " + service.name;
    out.append(prefix).append('\n');
    for (Method method : service.methods.values()) {
      out.append(prefix)
          .append(" rpc ")
          .append(method.name())
          .append(' ')
          .append(method.request())
          .append(" -> ")
          .append(method.response())
          .append(" stream:")
          .append(method.clientStreaming())
          .append('/')
          .append(method.serverStreaming())
          .append('\n');
    }
  }

  /**
   * Reads a lock written by {@link #format}; {@code source} names it in errors.
   *
   * @throws IllegalArgumentException naming the line that does not parse
   */
  static ProtoLock parse(String source, String text) {
    ProtoLock lock = null;
    String file = "";
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (lock != null && line.startsWith("#") && line.endsWith(".proto")) {
        file = line.substring(1).strip(); // the group comment format() writes
        continue;
      }
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] t = line.split("\\s+");
      try {
        if (t[0].equals("release") && t.length == 2 && lock == null) {
          lock = new ProtoLock(t[1]);
          continue;
        }
        if (lock == null) {
          throw new IllegalArgumentException("expected 'release NAME' first");
        }
        lock.parseEntry(t);
        lock.declaringFile.putIfAbsent(t[1], file);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            source + " line " + (i + 1) + ": " + e.getMessage() + ": " + line, e);
      }
    }
    if (lock == null) {
      throw new IllegalArgumentException(source + ": no 'release NAME' line");
    }
    return lock;
  }

  private void parseEntry(String[] t) {
    switch (t[0]) {
      case "message" -> {
        Message message = messages.computeIfAbsent(t[1], Message::new);
        if (t.length == 2) {
          return;
        }
        switch (t[2]) {
          case "field" -> {
            require(t.length >= 7, "a field needs: field NUMBER NAME TYPE LABEL");
            int number = Integer.parseInt(t[3]);
            String label = String.join(" ", List.of(t).subList(6, t.length));
            message.fields.put(number, new Field(number, t[4], t[5], label));
          }
          case "reserved" -> message.reservedNumbers.add(NumberRange.parse(only(t, 3)));
          case "reserved-name" -> message.reservedNames.add(only(t, 3));
          default -> throw new IllegalArgumentException("unknown message entry '" + t[2] + "'");
        }
      }
      case "enum" -> {
        EnumType enumType = enums.computeIfAbsent(t[1], EnumType::new);
        if (t.length == 2) {
          return;
        }
        switch (t[2]) {
          case "value" -> {
            require(t.length == 5, "a value needs: value NUMBER NAME");
            enumType.values.put(t[4], Integer.parseInt(t[3]));
          }
          case "reserved" -> enumType.reservedNumbers.add(NumberRange.parse(only(t, 3)));
          case "reserved-name" -> enumType.reservedNames.add(only(t, 3));
          default -> throw new IllegalArgumentException("unknown enum entry '" + t[2] + "'");
        }
      }
      case "service" -> {
        Service service = services.computeIfAbsent(t[1], Service::new);
        if (t.length == 2) {
          return;
        }
        require(
            t.length == 8
                && t[2].equals("rpc")
                && t[5].equals("->")
                && t[7].matches("stream:(true|false)/(true|false)"),
            "a method needs: rpc NAME REQUEST -> RESPONSE stream:BOOL/BOOL");
        String[] streaming = t[7].substring("stream:".length()).split("/");
        service.methods.put(
            t[3],
            new Method(
                t[3],
                t[4],
                t[6],
                Boolean.parseBoolean(streaming[0]),
                Boolean.parseBoolean(streaming[1])));
      }
      default -> throw new IllegalArgumentException("unknown entry '" + t[0] + "'");
    }
  }

  private static String only(String[] t, int index) {
    require(t.length == index + 1, "expected one value after '" + t[index - 1] + "'");
    return t[index];
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }
}
