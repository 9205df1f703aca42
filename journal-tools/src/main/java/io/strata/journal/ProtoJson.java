package io.strata.journal;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Protobuf messages to and from JSON in the proto3 JSON mapping, for the messages of the journal
 * (no well-known types): lowerCamelCase field names, fields at their default value left out,
 * 64-bit integers as strings, bytes as base64, enums by name, maps as objects. Output that
 * {@code com.google.protobuf.util.JsonFormat} parses, and the reverse.
 *
 * <p>Why not JsonFormat itself: protobuf-java-util is not a dependency of this build, and the
 * one release of it in the local repository cannot be resolved offline (its BOM was fetched
 * under another repository id), so builds that must work offline cannot use it. Gson, already
 * on the classpath through gRPC, does the JSON syntax; this class does only the mapping.
 */
final class ProtoJson {
  private ProtoJson() {}

  /** The message as a JSON object. */
  static JsonObject toJson(MessageOrBuilder message) {
    JsonObject out = new JsonObject();
    for (Map.Entry<FieldDescriptor, Object> e : message.getAllFields().entrySet()) {
      FieldDescriptor field = e.getKey();
      if (field.isMapField()) {
        JsonObject map = new JsonObject();
        for (Object o : (List<?>) e.getValue()) {
          Message entry = (Message) o;
          FieldDescriptor key = entry.getDescriptorForType().findFieldByNumber(1);
          FieldDescriptor value = entry.getDescriptorForType().findFieldByNumber(2);
          map.add(String.valueOf(scalarKey(key, entry.getField(key))),
              value(value, entry.getField(value)));
        }
        out.add(field.getJsonName(), map);
      } else if (field.isRepeated()) {
        JsonArray array = new JsonArray();
        for (Object o : (List<?>) e.getValue()) {
          array.add(value(field, o));
        }
        out.add(field.getJsonName(), array);
      } else {
        out.add(field.getJsonName(), value(field, e.getValue()));
      }
    }
    return out;
  }

  private static Object scalarKey(FieldDescriptor key, Object v) {
    return switch (key.getType()) {
      case UINT32, FIXED32 -> Integer.toUnsignedLong((Integer) v);
      case UINT64, FIXED64 -> Long.toUnsignedString((Long) v);
      default -> v;
    };
  }

  private static JsonElement value(FieldDescriptor field, Object v) {
    return switch (field.getType()) {
      case INT32, SINT32, SFIXED32 -> new JsonPrimitive((Integer) v);
      case UINT32, FIXED32 -> new JsonPrimitive(Integer.toUnsignedLong((Integer) v));
      case INT64, SINT64, SFIXED64 -> new JsonPrimitive(Long.toString((Long) v));
      case UINT64, FIXED64 -> new JsonPrimitive(Long.toUnsignedString((Long) v));
      case FLOAT -> floating(((Float) v).doubleValue());
      case DOUBLE -> floating((Double) v);
      case BOOL -> new JsonPrimitive((Boolean) v);
      case STRING -> new JsonPrimitive((String) v);
      case BYTES -> new JsonPrimitive(Base64.getEncoder().encodeToString(
          ((ByteString) v).toByteArray()));
      case ENUM -> {
        EnumValueDescriptor ev = (EnumValueDescriptor) v;
        yield ev.getIndex() < 0 ? new JsonPrimitive(ev.getNumber())
            : new JsonPrimitive(ev.getName());
      }
      case MESSAGE, GROUP -> toJson((Message) v);
    };
  }

  private static JsonPrimitive floating(double d) {
    if (Double.isNaN(d)) {
      return new JsonPrimitive("NaN");
    }
    if (Double.isInfinite(d)) {
      return new JsonPrimitive(d > 0 ? "Infinity" : "-Infinity");
    }
    return new JsonPrimitive(d);
  }

  /**
   * Merges a JSON object into a builder. Field names may be the JSON name or the proto name, as
   * JsonFormat accepts; an unknown field fails.
   *
   * @throws IllegalArgumentException naming the field that does not fit the message
   */
  static void merge(JsonObject json, Message.Builder builder) {
    Descriptor type = builder.getDescriptorForType();
    for (Map.Entry<String, JsonElement> e : json.entrySet()) {
      FieldDescriptor field = findField(type, e.getKey());
      JsonElement v = e.getValue();
      if (v.isJsonNull()) {
        continue;
      }
      if (field.isMapField()) {
        for (Map.Entry<String, JsonElement> me : v.getAsJsonObject().entrySet()) {
          Message.Builder entry = builder.newBuilderForField(field);
          FieldDescriptor key = entry.getDescriptorForType().findFieldByNumber(1);
          FieldDescriptor value = entry.getDescriptorForType().findFieldByNumber(2);
          entry.setField(key, parse(key, new JsonPrimitive(me.getKey()), entry));
          entry.setField(value, parse(value, me.getValue(), entry));
          builder.addRepeatedField(field, entry.build());
        }
      } else if (field.isRepeated()) {
        for (JsonElement item : v.getAsJsonArray()) {
          builder.addRepeatedField(field, parse(field, item, builder));
        }
      } else {
        builder.setField(field, parse(field, v, builder));
      }
    }
  }

  private static FieldDescriptor findField(Descriptor type, String name) {
    for (FieldDescriptor f : type.getFields()) {
      if (f.getJsonName().equals(name) || f.getName().equals(name)) {
        return f;
      }
    }
    throw new IllegalArgumentException(type.getFullName() + " has no field " + name);
  }

  private static Object parse(FieldDescriptor field, JsonElement v, Message.Builder parent) {
    return switch (field.getType()) {
      case INT32, SINT32, SFIXED32 -> v.getAsInt();
      case UINT32, FIXED32 -> (int) Long.parseLong(v.getAsString());
      case INT64, SINT64, SFIXED64 -> Long.parseLong(v.getAsString());
      case UINT64, FIXED64 -> Long.parseUnsignedLong(v.getAsString());
      case FLOAT -> (float) parseDouble(v);
      case DOUBLE -> parseDouble(v);
      case BOOL -> v.getAsBoolean();
      case STRING -> v.getAsString();
      case BYTES -> ByteString.copyFrom(Base64.getDecoder().decode(v.getAsString()));
      case ENUM -> enumValue(field, v);
      case MESSAGE, GROUP -> {
        Message.Builder b = parent.newBuilderForField(field);
        merge(v.getAsJsonObject(), b);
        yield b.build();
      }
    };
  }

  private static double parseDouble(JsonElement v) {
    String s = v.getAsString();
    return switch (s) {
      case "NaN" -> Double.NaN;
      case "Infinity" -> Double.POSITIVE_INFINITY;
      case "-Infinity" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(s);
    };
  }

  private static EnumValueDescriptor enumValue(FieldDescriptor field, JsonElement v) {
    JsonPrimitive p = v.getAsJsonPrimitive();
    EnumValueDescriptor ev = p.isNumber()
        ? field.getEnumType().findValueByNumberCreatingIfUnknown(p.getAsInt())
        : field.getEnumType().findValueByName(p.getAsString());
    if (ev == null) {
      throw new IllegalArgumentException(field.getFullName() + " has no value " + p);
    }
    return ev;
  }
}
