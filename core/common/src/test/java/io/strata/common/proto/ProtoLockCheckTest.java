package io.strata.common.proto;

import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label.LABEL_OPTIONAL;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label.LABEL_REPEATED;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type.TYPE_BYTES;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type.TYPE_ENUM;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type.TYPE_INT32;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type.TYPE_INT64;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type.TYPE_MESSAGE;
import static com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type.TYPE_STRING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.TextFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The comparison itself, on a small protocol built here rather than Strata's own. */
class ProtoLockCheckTest {
  /**
   * The released protocol: {@code message Item} with every kind of label, a map, a oneof, an enum
   * and a nested message; {@code enum Kind}; {@code service Shop} with a streaming method.
   */
  private static FileDescriptorProto.Builder released() {
    DescriptorProto labelsEntry =
        DescriptorProto.newBuilder()
            .setName("LabelsEntry")
            .addField(field("key", 1, TYPE_STRING))
            .addField(field("value", 2, TYPE_STRING))
            .setOptions(MessageOptions.newBuilder().setMapEntry(true))
            .build();
    DescriptorProto item =
        DescriptorProto.newBuilder()
            .setName("Item")
            .addField(field("name", 1, TYPE_STRING))
            .addField(field("price", 2, TYPE_INT64))
            .addField(field("tags", 3, TYPE_STRING).setLabel(LABEL_REPEATED))
            .addField(field("stock", 4, TYPE_INT32).setProto3Optional(true).setOneofIndex(1))
            .addField(
                field("labels", 5, TYPE_MESSAGE)
                    .setTypeName(".shop.Item.LabelsEntry")
                    .setLabel(LABEL_REPEATED))
            .addField(field("url", 6, TYPE_STRING).setOneofIndex(0))
            .addField(field("blob", 7, TYPE_BYTES).setOneofIndex(0))
            .addField(field("kind", 8, TYPE_ENUM).setTypeName(".shop.Kind"))
            .addField(field("main_part", 9, TYPE_MESSAGE).setTypeName(".shop.Item.Part"))
            .addOneofDecl(OneofDescriptorProto.newBuilder().setName("source"))
            .addOneofDecl(OneofDescriptorProto.newBuilder().setName("_stock"))
            .addReservedRange(DescriptorProto.ReservedRange.newBuilder().setStart(10).setEnd(13))
            .addReservedName("legacy")
            .addNestedType(labelsEntry)
            .addNestedType(
                DescriptorProto.newBuilder().setName("Part").addField(field("id", 1, TYPE_INT32)))
            .build();
    EnumDescriptorProto kind =
        EnumDescriptorProto.newBuilder()
            .setName("Kind")
            .addValue(value("KIND_UNSPECIFIED", 0))
            .addValue(value("KIND_BOOK", 1))
            .addValue(value("KIND_FOOD", 2))
            .addReservedRange(
                EnumDescriptorProto.EnumReservedRange.newBuilder().setStart(9).setEnd(9))
            .addReservedName("KIND_OLD")
            .build();
    ServiceDescriptorProto shop =
        ServiceDescriptorProto.newBuilder()
            .setName("Shop")
            .addMethod(method("GetItem", ".shop.Item", ".shop.Item"))
            .addMethod(method("Watch", ".shop.Item", ".shop.Item").setServerStreaming(true))
            .build();
    return FileDescriptorProto.newBuilder()
        .setName("shop.proto")
        .setPackage("shop")
        .setSyntax("proto3")
        .addMessageType(item)
        .addEnumType(kind)
        .addService(shop);
  }

  private static FieldDescriptorProto.Builder field(
      String name, int number, FieldDescriptorProto.Type type) {
    return FieldDescriptorProto.newBuilder()
        .setName(name)
        .setNumber(number)
        .setLabel(LABEL_OPTIONAL)
        .setType(type);
  }

  private static EnumValueDescriptorProto.Builder value(String name, int number) {
    return EnumValueDescriptorProto.newBuilder().setName(name).setNumber(number);
  }

  private static MethodDescriptorProto.Builder method(String name, String in, String out) {
    return MethodDescriptorProto.newBuilder().setName(name).setInputType(in).setOutputType(out);
  }

  private static DescriptorProto.Builder item(FileDescriptorProto.Builder file) {
    return file.getMessageTypeBuilderList().stream()
        .filter(message -> message.getName().equals("Item"))
        .findFirst()
        .orElseThrow();
  }

  private static FieldDescriptorProto.Builder itemField(
      FileDescriptorProto.Builder file, String name) {
    return item(file).getFieldBuilderList().stream()
        .filter(field -> field.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static void removeItemField(FileDescriptorProto.Builder file, String name) {
    item(file).removeField(item(file).getFieldList().indexOf(itemField(file, name).build()));
  }

  private static ProtoLock lock(FileDescriptorProto.Builder file) {
    try {
      return ProtoLock.of(
          "v1", List.of(FileDescriptor.buildFrom(file.build(), new FileDescriptor[0])));
    } catch (DescriptorValidationException e) {
      throw new AssertionError("test protocol does not build: " + e.getMessage(), e);
    }
  }

  private static List<String> problems(FileDescriptorProto.Builder now) {
    return problems(now, AllowedChanges.none());
  }

  private static List<String> problems(FileDescriptorProto.Builder now, AllowedChanges allowed) {
    return ProtoLockCheck.compare(lock(released()), lock(now), allowed).incompatibilities().stream()
        .map(Incompatibility::toString)
        .toList();
  }

  @Test
  void unchangedProtocolPasses() {
    ProtoLockCheck.Result result =
        ProtoLockCheck.compare(lock(released()), lock(released()), AllowedChanges.none());
    assertTrue(result.passed(), result.describe("lock", "allowed"));
  }

  @Test
  void lockTextReadsBackToTheSameContract() {
    String text = lock(released()).format();
    ProtoLock parsed = ProtoLock.parse("shop.lock", text);
    assertEquals(text, parsed.format());
    assertTrue(text.contains("message shop.Item field 4 stock int32 optional\n"), text);
    assertTrue(text.contains("message shop.Item field 1 name string singular\n"), text);
    assertTrue(
        text.contains("message shop.Item field 5 labels map<string,string> repeated\n"), text);
    assertTrue(text.contains("message shop.Item field 7 blob bytes oneof source\n"), text);
    assertTrue(text.contains("message shop.Item reserved 10-12\n"), text);
    assertTrue(text.contains("enum shop.Kind value 2 KIND_FOOD\n"), text);
    assertTrue(
        text.contains("service shop.Shop rpc Watch shop.Item -> shop.Item stream:false/true\n"),
        text);
    assertTrue(!text.contains("LabelsEntry"), "map entries stand behind their map type");
    assertTrue(ProtoLockCheck.compare(parsed, lock(released()), AllowedChanges.none()).passed());
  }

  @Test
  void malformedLockLineIsRefusedWithItsLineNumber() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProtoLock.parse("x.lock", "release v1\nmessage a.B field 3 name\n"));
    assertTrue(e.getMessage().startsWith("x.lock line 2:"), e.getMessage());
  }

  @Test
  void additionsAreAccepted() {
    FileDescriptorProto.Builder now = released();
    item(now)
        .addField(field("weight", 14, TYPE_INT64))
        .addField(field("mirror", 15, TYPE_STRING).setOneofIndex(0));
    now.addMessageType(
        DescriptorProto.newBuilder()
            .setName("Basket")
            .addField(
                field("items", 1, TYPE_MESSAGE)
                    .setTypeName(".shop.Item")
                    .setLabel(LABEL_REPEATED)));
    now.getEnumTypeBuilder(0).addValue(value("KIND_TOOL", 3));
    now.addEnumType(EnumDescriptorProto.newBuilder().setName("Size").addValue(value("S", 0)));
    now.getServiceBuilder(0).addMethod(method("Count", ".shop.Item", ".shop.Item"));
    now.addService(
        ServiceDescriptorProto.newBuilder()
            .setName("Till")
            .addMethod(method("Pay", ".shop.Basket", ".shop.Basket")));
    assertEquals(List.of(), problems(now));
  }

  @Test
  void removedFieldIsReported() {
    FileDescriptorProto.Builder now = released();
    removeItemField(now, "price");
    assertEquals(
        List.of(
            "shop.Item field 2: field 'price' removed; if for good, reserve its"
                + " number and name"),
        problems(now));
  }

  @Test
  void renumberedFieldIsReported() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "price").setNumber(20);
    assertEquals(List.of("shop.Item field 2: field 'price' renumbered to 20"), problems(now));
  }

  @Test
  void swappedNumbersAreReportedForBothFields() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "name").setNumber(2).setType(TYPE_INT64);
    itemField(now, "price").setNumber(1).setType(TYPE_STRING);
    assertEquals(
        List.of(
            "shop.Item field 1: field 'name' renumbered to 2, and number 1 now belongs to 'price'",
            "shop.Item field 2: field 'price' renumbered to 1, and number 2 now belongs to 'name'"),
        problems(now));
  }

  @Test
  void numberReusedByAnotherNameIsReported() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "price").setName("cost");
    assertEquals(List.of("shop.Item field 2: field 'price' renamed to 'cost'"), problems(now));
  }

  @Test
  void changedTypesAreReported() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "price").setType(TYPE_INT32);
    itemField(now, "main_part").setTypeName(".shop.Item");
    itemField(now, "kind").setType(TYPE_INT32).clearTypeName();
    item(now).getNestedTypeBuilder(0).getFieldBuilder(1).setType(TYPE_BYTES);
    assertEquals(
        List.of(
            "shop.Item field 2: field 'price' type changed from int64 to int32",
            "shop.Item field 5: field 'labels' type changed from map<string,string> to"
                + " map<string,bytes>",
            "shop.Item field 8: field 'kind' type changed from shop.Kind to int32",
            "shop.Item field 9: field 'main_part' type changed from shop.Item.Part to shop.Item"),
        problems(now));
  }

  @Test
  void changedLabelsAreReported() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "name").setLabel(LABEL_REPEATED);
    itemField(now, "stock").clearProto3Optional().setOneofIndex(0);
    item(now).getOneofDeclBuilder(1).setName("_price");
    itemField(now, "price").setProto3Optional(true).setOneofIndex(1);
    itemField(now, "blob").clearOneofIndex();
    assertEquals(
        List.of(
            "shop.Item field 1: field 'name' changed from singular to repeated",
            "shop.Item field 2: field 'price' changed from singular to optional",
            "shop.Item field 4: field 'stock' changed from optional to oneof source",
            "shop.Item field 7: field 'blob' changed from oneof source to singular"),
        problems(now));
  }

  @Test
  void mapTurnedIntoARepeatedMessageIsReported() {
    FileDescriptorProto.Builder now = released();
    item(now).getNestedTypeBuilder(0).clearOptions().setName("Label");
    itemField(now, "labels").setTypeName(".shop.Item.Label");
    assertEquals(
        List.of(
            "shop.Item field 5: field 'labels' type changed from"
                + " map<string,string> to shop.Item.Label"),
        problems(now));
  }

  @Test
  void removedMessageEnumServiceAndMethodAreReported() {
    FileDescriptorProto.Builder now = released();
    item(now).removeNestedType(1);
    removeItemField(now, "main_part");
    now.getServiceBuilder(0).removeMethod(1);
    FileDescriptorProto.Builder withoutEnumAndService = released();
    removeItemField(withoutEnumAndService, "kind");
    withoutEnumAndService.clearEnumType().clearService();
    assertEquals(
        List.of(
            "shop.Item field 9: field 'main_part' removed; if for good, reserve its number and name",
            "shop.Item.Part: message removed",
            "shop.Shop rpc Watch: method removed"),
        problems(now));
    assertEquals(
        List.of(
            "shop.Item field 8: field 'kind' removed; if for good, reserve its number and name",
            "shop.Kind: enum removed",
            "shop.Shop: service removed"),
        problems(withoutEnumAndService));
  }

  @Test
  void enumValueChangesAreReported() {
    FileDescriptorProto.Builder now = released();
    EnumDescriptorProto.Builder kind = now.getEnumTypeBuilder(0);
    kind.getValueBuilder(1).setName("KIND_NOVEL");
    kind.getValueBuilder(2).setNumber(7);
    FileDescriptorProto.Builder removed = released();
    removed.getEnumTypeBuilder(0).removeValue(2);
    assertEquals(
        List.of(
            "shop.Kind value 1: value KIND_BOOK renamed to KIND_NOVEL",
            "shop.Kind value 2: value KIND_FOOD renumbered to 7"),
        problems(now));
    assertEquals(
        List.of(
            "shop.Kind value 2: value KIND_FOOD removed; if for good, reserve its number and name"),
        problems(removed));
  }

  @Test
  void methodTypeAndStreamingChangesAreReported() {
    FileDescriptorProto.Builder now = released();
    now.getServiceBuilder(0)
        .getMethodBuilder(0)
        .setInputType(".shop.Item.Part")
        .setClientStreaming(true);
    now.getServiceBuilder(0)
        .getMethodBuilder(1)
        .setOutputType(".shop.Item.Part")
        .setServerStreaming(false);
    assertEquals(
        List.of(
            "shop.Shop rpc GetItem: request type changed from shop.Item to shop.Item.Part",
            "shop.Shop rpc GetItem: request streaming changed from false to true",
            "shop.Shop rpc Watch: response type changed from shop.Item to shop.Item.Part",
            "shop.Shop rpc Watch: response streaming changed from true to false"),
        problems(now));
  }

  @Test
  void reservedNumbersAndNamesStayReserved() {
    FileDescriptorProto.Builder now = released();
    item(now)
        .clearReservedRange()
        .clearReservedName()
        .addField(field("size", 11, TYPE_INT32))
        .addField(field("legacy", 20, TYPE_STRING));
    now.getEnumTypeBuilder(0)
        .clearReservedRange()
        .clearReservedName()
        .addValue(value("KIND_OLD", 5))
        .addValue(value("KIND_GAME", 9));
    assertEquals(
        List.of(
            "shop.Item field 11: field 'size' takes number 11, reserved in v1",
            "shop.Item field 20: field 'legacy' takes a name reserved in v1",
            "shop.Kind value 5: value KIND_OLD takes a name reserved in v1",
            "shop.Kind value 9: value KIND_GAME takes number 9, reserved in v1"),
        problems(now));
  }

  @Test
  void breakLineAllowsExactlyItsSubject() {
    FileDescriptorProto.Builder now = released();
    removeItemField(now, "name");
    removeItemField(now, "price");
    AllowedChanges allowed =
        AllowedChanges.parse(
            "allowed", "# deliberate\nbreak shop.Item field 1: nothing has sent a name since v0\n");
    ProtoLockCheck.Result result = ProtoLockCheck.compare(lock(released()), lock(now), allowed);
    assertEquals(
        List.of(
            "shop.Item field 2: field 'price' removed; if for good, reserve its"
                + " number and name"),
        result.incompatibilities().stream().map(Incompatibility::toString).toList());
    assertEquals(List.of(), result.unusedAllowances());
  }

  @Test
  void renameLineAllowsTheNewNameButNotATypeChange() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "name").setName("title");
    itemField(now, "price").setName("cost").setType(TYPE_INT32);
    now.getEnumTypeBuilder(0).getValueBuilder(1).setName("KIND_NOVEL");
    AllowedChanges allowed =
        AllowedChanges.parse(
            "allowed",
            String.join(
                "\n",
                "rename shop.Item field 1 name -> title",
                "rename shop.Item field 2 price -> cost",
                "rename shop.Kind value 1 KIND_BOOK -> KIND_NOVEL"));
    assertEquals(
        List.of("shop.Item field 2: field 'cost' type changed from int64 to int32"),
        problems(now, allowed));
  }

  @Test
  void renameLineForAnotherNewNameAllowsNothing() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "name").setName("label");
    AllowedChanges allowed =
        AllowedChanges.parse("allowed", "rename shop.Item field 1 name -> title");
    ProtoLockCheck.Result result = ProtoLockCheck.compare(lock(released()), lock(now), allowed);
    assertEquals(
        List.of("shop.Item field 1: field 'name' renamed to 'label'"),
        result.incompatibilities().stream().map(Incompatibility::toString).toList());
    assertEquals(1, result.unusedAllowances().size());
  }

  @Test
  void typeRenameFollowsTheMessageItsNestedTypesAndItsUses() throws Exception {
    String renamed =
        TextFormat.printer()
            .printToString(released().build())
            .replace("\"Item\"", "\"Product\"")
            .replace(".shop.Item", ".shop.Product");
    FileDescriptorProto.Builder now = FileDescriptorProto.newBuilder();
    TextFormat.merge(renamed, now);
    assertEquals(
        List.of(
            "shop.Item: message removed",
            "shop.Item.Part: message removed",
            "shop.Shop rpc GetItem: request type changed from shop.Item to shop.Product",
            "shop.Shop rpc GetItem: response type changed from shop.Item to shop.Product",
            "shop.Shop rpc Watch: request type changed from shop.Item to shop.Product",
            "shop.Shop rpc Watch: response type changed from shop.Item to shop.Product"),
        problems(now));
    AllowedChanges allowed = AllowedChanges.parse("allowed", "rename shop.Item -> shop.Product");
    ProtoLockCheck.Result result = ProtoLockCheck.compare(lock(released()), lock(now), allowed);
    assertTrue(result.passed(), result.describe("lock", "allowed"));
  }

  @Test
  void allowLineThatAllowsNothingIsReported() {
    AllowedChanges allowed =
        AllowedChanges.parse(
            "allowed", "\nbreak shop.Item field 2: price moved to the catalogue\n");
    ProtoLockCheck.Result result =
        ProtoLockCheck.compare(lock(released()), lock(released()), allowed);
    assertEquals(
        List.of(
            new AllowedChanges.Entry(2, "break shop.Item field 2: price moved to the catalogue")),
        result.unusedAllowances());
    assertTrue(
        result
            .describe("v1.lock", "allowed-changes.txt")
            .contains("that allow no change; remove them:\n  line 2: break shop.Item field 2"));
  }

  @Test
  void malformedAllowLinesAreRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> AllowedChanges.parse("allowed", "break shop.Item field 2"));
    assertThrows(
        IllegalArgumentException.class,
        () -> AllowedChanges.parse("allowed", "break shop.Item field 2:   "));
    assertThrows(
        IllegalArgumentException.class,
        () -> AllowedChanges.parse("allowed", "break shop.Item fields 2: plural"));
    assertThrows(
        IllegalArgumentException.class,
        () -> AllowedChanges.parse("allowed", "rename shop.Item field 2 price"));
  }

  @Test
  void reportListsEveryProblemWithTheLineThatWouldAllowIt() {
    FileDescriptorProto.Builder now = released();
    itemField(now, "name").setName("title");
    itemField(now, "price").setNumber(21);
    String report =
        ProtoLockCheck.compare(lock(released()), lock(now), AllowedChanges.none())
            .describe("proto-lock/v1.lock", "proto-lock/allowed-changes.txt");
    assertTrue(report.contains("since release v1 (proto-lock/v1.lock)"), report);
    assertTrue(report.contains("  shop.Item field 1: field 'name' renamed to 'title'\n"), report);
    assertTrue(report.contains("  shop.Item field 2: field 'price' renumbered to 21\n"), report);
    assertTrue(report.contains("  rename shop.Item field 1 name -> title\n"), report);
    assertTrue(report.contains("  break shop.Item field 2: <why this is safe>\n"), report);
    assertTrue(report.contains("docs/proto-compatibility.md"), report);
  }
}
