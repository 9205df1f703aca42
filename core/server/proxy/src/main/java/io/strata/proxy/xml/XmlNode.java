package io.strata.proxy.xml;

import java.util.List;

/**
 * An element of a parsed request document: its local name, its text (all character data directly
 * inside it, empty for an element with children) and its child elements in order.
 */
record XmlNode(String name, String text, List<XmlNode> children) {
  List<XmlNode> all(String childName) {
    return children.stream().filter(c -> c.name.equals(childName)).toList();
  }

  /** The only child of that name, or null when there is none. */
  XmlNode optional(String childName) {
    XmlNode found = null;
    for (XmlNode c : children) {
      if (c.name.equals(childName)) {
        if (found != null) {
          throw S3XmlParser.malformed("<" + name + "> has more than one <" + childName + ">");
        }
        found = c;
      }
    }
    return found;
  }

  /** The only child of that name. */
  XmlNode required(String childName, String where) {
    XmlNode found = optional(childName);
    if (found == null) {
      throw S3XmlParser.malformed(where + " has no <" + childName + ">");
    }
    return found;
  }

  /** The text of a leaf; an element with children where text belongs is malformed. */
  String leafText() {
    if (!children.isEmpty()) {
      throw S3XmlParser.malformed("<" + name + "> holds elements where text belongs");
    }
    return text;
  }
}
