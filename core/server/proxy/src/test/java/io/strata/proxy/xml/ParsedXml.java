package io.strata.proxy.xml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamReader;

/**
 * A response document read back with a plain StAX parser, independent of the code under test, for
 * tests to check every element.
 */
record ParsedXml(String name, String namespace, String text, List<ParsedXml> children) {
  static final String DECLARATION = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

  static ParsedXml parse(byte[] document) {
    String s = new String(document, StandardCharsets.UTF_8);
    assertTrue(s.startsWith(DECLARATION + "\n"), "declaration missing: " + s);
    try {
      XMLInputFactory f = XMLInputFactory.newDefaultFactory();
      f.setProperty(XMLInputFactory.IS_COALESCING, true);
      XMLStreamReader r = f.createXMLStreamReader(new ByteArrayInputStream(document));
      assertEquals("UTF-8", r.getCharacterEncodingScheme());
      Deque<Object[]> open = new ArrayDeque<>();
      ParsedXml root = null;
      while (r.hasNext()) {
        switch (r.next()) {
          case XMLStreamConstants.START_ELEMENT ->
              open.push(
                  new Object[] {
                    r.getLocalName(),
                    r.getNamespaceURI(),
                    new StringBuilder(),
                    new ArrayList<ParsedXml>()
                  });
          case XMLStreamConstants.CHARACTERS -> {
            if (!open.isEmpty()) {
              ((StringBuilder) open.peek()[2]).append(r.getText());
            }
          }
          case XMLStreamConstants.END_ELEMENT -> {
            Object[] b = open.pop();
            @SuppressWarnings("unchecked")
            List<ParsedXml> kids = (List<ParsedXml>) b[3];
            ParsedXml node =
                new ParsedXml((String) b[0], (String) b[1], b[2].toString(), List.copyOf(kids));
            if (open.isEmpty()) {
              root = node;
            } else {
              @SuppressWarnings("unchecked")
              List<ParsedXml> parent = (List<ParsedXml>) open.peek()[3];
              parent.add(node);
            }
          }
          default -> {}
        }
      }
      return root;
    } catch (Exception e) {
      throw new AssertionError("not well-formed: " + s, e);
    }
  }

  List<ParsedXml> all(String child) {
    return children.stream().filter(c -> c.name.equals(child)).toList();
  }

  ParsedXml child(String child) {
    List<ParsedXml> found = all(child);
    assertEquals(1, found.size(), "exactly one <" + child + "> in <" + name + ">");
    return found.get(0);
  }

  String text(String child) {
    return child(child).text;
  }

  boolean has(String child) {
    return !all(child).isEmpty();
  }

  List<String> childNames() {
    return children.stream().map(ParsedXml::name).toList();
  }
}
