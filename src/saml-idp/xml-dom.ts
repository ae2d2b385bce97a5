// The few DOM members the SAML code uses, typed here: @xmldom/xmldom's own declarations pull the
// browser DOM library into the whole program (its `reference lib="dom"` changes fetch and
// WebCrypto types everywhere), so the module is loaded through require with these interfaces.
import { createRequire } from 'node:module';

export interface XNode {
  readonly nodeType: number;
  readonly parentNode: XNode | null;
  readonly childNodes: ArrayLike<XNode>;
  readonly textContent: string | null;
  appendChild(child: XNode): XNode;
  replaceChild(newChild: XNode, oldChild: XNode): XNode;
}

export interface XElement extends XNode {
  readonly namespaceURI: string | null;
  readonly localName: string;
  hasAttribute(name: string): boolean;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  getElementsByTagNameNS(ns: string, local: string): ArrayLike<XElement>;
  getElementsByTagName(name: string): ArrayLike<XElement>;
}

export interface XDocument extends XNode {
  readonly documentElement: XElement;
  createElementNS(ns: string, qualifiedName: string): XElement;
  createTextNode(text: string): XNode;
  importNode(node: XNode, deep: boolean): XNode;
  getElementsByTagNameNS(ns: string, local: string): ArrayLike<XElement>;
  getElementsByTagName(name: string): ArrayLike<XElement>;
}

interface XmlDom {
  DOMParser: new (options: {
    errorHandler: {
      warning: (m: string) => void;
      error: (m: string) => void;
      fatalError: (m: string) => void;
    };
  }) => { parseFromString(xml: string, mime: string): XDocument | undefined };
  DOMImplementation: new () => {
    createDocument(ns: string, qualifiedName: string, doctype: null): XDocument;
  };
  XMLSerializer: new () => { serializeToString(node: XNode): string };
}

export const xmldom = createRequire(import.meta.url)('@xmldom/xmldom') as XmlDom;

export const isElement = (n: XNode): n is XElement => n.nodeType === 1;
