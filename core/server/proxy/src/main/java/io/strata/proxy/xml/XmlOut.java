package io.strata.proxy.xml;

import java.io.ByteArrayOutputStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * One response document being written: a StAX writer over a byte buffer, with text escaped so that
 * every string survives a round trip through an XML parser where XML allows it at all.
 *
 * <p>The JDK writer escapes {@code <}, {@code >} and {@code &} but writes other characters raw.
 * This class also writes {@code "} as {@code &quot;} (as S3 writes ETags), CR as {@code &#xd;} (a
 * raw CR would come back as LF after end-of-line normalisation), and characters XML 1.0 forbids (C0
 * controls other than tab and LF, U+FFFE, U+FFFF) as hex character references, {@code &#x1;}, which
 * is what S3 sends for them. XML 1.0 parsers refuse such references, which is why clients ask for
 * {@code encoding-type=url}; a lone surrogate, which UTF-8 cannot carry, is written as U+FFFD.
 */
final class XmlOut {
  /** The namespace S3 puts on its response documents (not on Error). */
  static final String S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/";

  private static final DateTimeFormatter TIMESTAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private final ByteArrayOutputStream out = new ByteArrayOutputStream(1024);
  private final XMLStreamWriter w;

  /** Starts a document with the XML declaration and the root element. */
  XmlOut(String root, boolean s3Namespace) {
    try {
      // The JDK's own implementation, whatever StAX provider the classpath carries, so the
      // escaping above is the escaping that happens.
      w = XMLOutputFactory.newDefaultFactory().createXMLStreamWriter(out, "UTF-8");
      w.writeStartDocument("UTF-8", "1.0");
      w.writeCharacters("\n");
      w.writeStartElement(root);
      if (s3Namespace) {
        w.writeDefaultNamespace(S3_NAMESPACE);
      }
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A whole document that is one empty root element in S3's namespace, {@code <root .../>}. */
  static byte[] emptyRoot(String root) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream(128);
      XMLStreamWriter w = XMLOutputFactory.newDefaultFactory().createXMLStreamWriter(out, "UTF-8");
      w.writeStartDocument("UTF-8", "1.0");
      w.writeCharacters("\n");
      w.writeEmptyElement(root);
      w.writeDefaultNamespace(S3_NAMESPACE);
      w.writeEndDocument();
      w.close();
      return out.toByteArray();
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Text directly inside the element last opened (or the root). */
  XmlOut text(String s) {
    writeEscaped(s);
    return this;
  }

  /** Formats a time as S3 does in XML: UTC, milliseconds, {@code 2009-10-12T17:50:30.000Z}. */
  static String timestamp(Instant time) {
    return TIMESTAMP.format(time);
  }

  /** An ETag with its double quotes, as S3 writes them; one already quoted is kept. */
  static String quoted(String etag) {
    return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")
        ? etag
        : "\"" + etag + "\"";
  }

  XmlOut open(String name) {
    try {
      w.writeStartElement(name);
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
    return this;
  }

  /**
   * Opens an element typed with {@code xsi:type}, as S3's ACL grantees are ({@code <Grantee
   * xmlns:xsi="..." xsi:type="CanonicalUser">}).
   */
  XmlOut openTyped(String name, String xsiType) {
    try {
      w.writeStartElement(name);
      w.writeNamespace("xsi", "http://www.w3.org/2001/XMLSchema-instance");
      w.writeAttribute("http://www.w3.org/2001/XMLSchema-instance", "type", xsiType);
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
    return this;
  }

  XmlOut close() {
    try {
      w.writeEndElement();
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
    return this;
  }

  /** {@code <name>value</name>}; an empty value gives {@code <name></name>}, as S3 writes. */
  XmlOut element(String name, String value) {
    open(name);
    text(value);
    return close();
  }

  /** The element when the value is not null. */
  XmlOut optional(String name, String value) {
    return value == null ? this : element(name, value);
  }

  XmlOut element(String name, long value) {
    return element(name, Long.toString(value));
  }

  XmlOut element(String name, boolean value) {
    return element(name, Boolean.toString(value));
  }

  XmlOut element(String name, Instant value) {
    return element(name, timestamp(value));
  }

  /** Closes the root element and the document; the writer must not be used afterwards. */
  byte[] finish() {
    try {
      w.writeEndDocument();
      w.close();
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
    return out.toByteArray();
  }

  private void writeEscaped(String s) {
    try {
      char[] chars = s.toCharArray();
      int plainFrom = 0;
      for (int i = 0; i < chars.length; i++) {
        char c = chars[i];
        String reference = null;
        boolean replaceWithFffd = false;
        if (c == '"') {
          reference = "quot";
        } else if (c == '\r'
            || (c < 0x20 && c != '\t' && c != '\n')
            || c == '\uFFFE'
            || c == '\uFFFF') {
          reference = "#x" + Integer.toHexString(c);
        } else if (Character.isHighSurrogate(c)
            && i + 1 < chars.length
            && Character.isLowSurrogate(chars[i + 1])) {
          i++; // a proper pair is written as is
          continue;
        } else if (Character.isSurrogate(c)) {
          replaceWithFffd = true;
        }
        if (reference == null && !replaceWithFffd) {
          continue;
        }
        if (i > plainFrom) {
          w.writeCharacters(chars, plainFrom, i - plainFrom);
        }
        if (reference != null) {
          w.writeEntityRef(reference);
        } else {
          w.writeCharacters("\uFFFD");
        }
        plainFrom = i + 1;
      }
      if (chars.length > plainFrom) {
        w.writeCharacters(chars, plainFrom, chars.length - plainFrom);
      }
    } catch (XMLStreamException e) {
      throw new IllegalStateException(e);
    }
  }
}
