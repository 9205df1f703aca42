package io.strata.proxy.xml;

import java.io.ByteArrayInputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * Reads a request document into an {@link XmlNode} tree with the JDK's StAX parser, safely: no DTD
 * is accepted (so no entity of any kind, internal or external, and nothing fetched), and the size,
 * depth and element count are bounded before anything is kept.
 */
final class XmlIn {
  /** S3's documents nest four levels at most; anything deeper is not one of them. */
  static final int MAX_DEPTH = 8;

  /** Enough for a 10,000-part CompleteMultipartUpload with every optional element. */
  static final int MAX_ELEMENTS = 100_000;

  private XmlIn() {}

  /**
   * Parses a document whose root must be {@code rootName}, with no namespace or S3's.
   *
   * @throws io.strata.proxy.s3.S3Exception MALFORMED_XML for anything else
   */
  static XmlNode parse(byte[] document, int maxBytes, String rootName) {
    if (document.length > maxBytes) {
      throw S3XmlParser.malformed(
          "the "
              + rootName
              + " document is "
              + document.length
              + " bytes, more than the "
              + maxBytes
              + " allowed");
    }
    XMLStreamReader r = null;
    try {
      r = factory().createXMLStreamReader(new ByteArrayInputStream(document));
      Deque<Building> open = new ArrayDeque<>();
      XmlNode root = null;
      int elements = 0;
      while (r.hasNext()) {
        int event = r.next();
        switch (event) {
          case XMLStreamConstants.START_ELEMENT -> {
            if (open.isEmpty()) {
              String ns = r.getNamespaceURI();
              if (!r.getLocalName().equals(rootName)) {
                throw S3XmlParser.malformed(
                    "the root element is <" + r.getLocalName() + ">, not <" + rootName + ">");
              }
              if (ns != null && !ns.isEmpty() && !ns.equals(XmlOut.S3_NAMESPACE)) {
                throw S3XmlParser.malformed(
                    "<" + rootName + "> is in namespace " + ns + ", not " + XmlOut.S3_NAMESPACE);
              }
            }
            if (open.size() >= MAX_DEPTH) {
              throw S3XmlParser.malformed("elements nest more than " + MAX_DEPTH + " deep");
            }
            if (++elements > MAX_ELEMENTS) {
              throw S3XmlParser.malformed(
                  "the document has more than " + MAX_ELEMENTS + " elements");
            }
            open.push(new Building(r.getLocalName()));
          }
          case XMLStreamConstants.CHARACTERS,
              XMLStreamConstants.CDATA,
              XMLStreamConstants.SPACE -> {
            if (!open.isEmpty()) {
              open.peek().text.append(r.getTextCharacters(), r.getTextStart(), r.getTextLength());
            }
          }
          case XMLStreamConstants.END_ELEMENT -> {
            XmlNode node = open.pop().build();
            if (open.isEmpty()) {
              root = node;
            } else {
              open.peek().children.add(node);
            }
          }
          case XMLStreamConstants.DTD ->
              throw S3XmlParser.malformed("document type declarations are not allowed");
          case XMLStreamConstants.ENTITY_REFERENCE ->
              throw S3XmlParser.malformed("entity references are not allowed");
          default -> {
            // Comments, processing instructions and the document's start and end: nothing kept.
          }
        }
      }
      if (root == null) {
        throw S3XmlParser.malformed("the body has no <" + rootName + "> element");
      }
      return root;
    } catch (XMLStreamException e) {
      String detail =
          e.getMessage() == null
              ? "not well-formed XML"
              : e.getMessage().replaceAll("\\s+", " ").trim();
      throw S3XmlParser.malformed(detail);
    } finally {
      if (r != null) {
        try {
          r.close();
        } catch (XMLStreamException ignored) {
          // Nothing is held: the input is a byte array.
        }
      }
    }
  }

  private static XMLInputFactory factory() {
    // The JDK's implementation, configured per call: factories are cheap, request documents
    // rare, and StAX does not promise a shared factory is thread-safe.
    XMLInputFactory f = XMLInputFactory.newDefaultFactory();
    f.setProperty(XMLInputFactory.SUPPORT_DTD, false);
    f.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
    f.setProperty(XMLInputFactory.IS_REPLACING_ENTITY_REFERENCES, false);
    f.setProperty(XMLConstants.ACCESS_EXTERNAL_DTD, "");
    f.setProperty(XMLInputFactory.IS_NAMESPACE_AWARE, true);
    f.setProperty(XMLInputFactory.IS_COALESCING, true);
    return f;
  }

  private static final class Building {
    final String name;
    final StringBuilder text = new StringBuilder();
    final List<XmlNode> children = new ArrayList<>();

    Building(String name) {
      this.name = name;
    }

    XmlNode build() {
      String t = text.toString();
      if (!children.isEmpty()) {
        if (!t.isBlank()) {
          throw S3XmlParser.malformed("<" + name + "> mixes text and elements");
        }
        t = "";
      }
      return new XmlNode(name, t, List.copyOf(children));
    }
  }
}
