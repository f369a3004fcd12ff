import { foreignContent, html, Tokenizer, TokenizerMode, type Token, type TokenHandler } from 'parse5';
import { TextSkippingTokenizer } from './text-skipping-tokenizer.js';

const $ = html.TAG_ID;
const NS = html.NS;

/** Receives the start and end tags of a document, in document order. */
export interface TagVisitor {
  /**
   * `namespace` is the one the element is created in: `NS.HTML`, or `NS.SVG` / `NS.MATHML` inside
   * `<svg>` / `<math>`. Tag and attribute names are lower-case (SVG/MathML names are adjusted to their
   * camel case, e.g. `foreignObject`); attribute values have character references decoded; a repeated
   * attribute is dropped (the first wins), as the HTML spec says.
   */
  startTag(token: Token.TagToken, namespace: html.NS): void;
  /** `namespace` is the one in effect where the end tag appears. */
  endTag(token: Token.TagToken, namespace: html.NS): void;
}

export interface ScanOptions {
  /**
   * Tokenise `<noscript>` content as a browser with scripting enabled does (raw text, so tags inside
   * are not seen) or disabled (markup). A crawler that runs no script sees what a scripting-disabled
   * browser renders, so the link extractor passes false.
   */
  scripting: boolean;
  /**
   * Read the document as XHTML (`application/xhtml+xml`) is read, by an XML parser: a self-closing tag
   * such as `<script src="x.js"/>` or `<title/>` is an empty element, not the start of raw text that
   * would swallow the rest of the page, and `<![CDATA[ ... ]]>` is text anywhere, not only in SVG or
   * MathML. Everything else (entities, attribute syntax) stays the HTML tokenizer's, which reads well-
   * formed XHTML the same way and forgives the malformed XHTML that browsers would refuse to show.
   */
  xml?: boolean;
  /** The tokenizer to drive; tests pass parse5's unmodified `Tokenizer` to cross-check the default. */
  createTokenizer?: (handler: TokenHandler) => Tokenizer;
}

/**
 * Streams the tags of an HTML document to `visitor`, synchronously, without building a tree.
 *
 * A tokenizer alone gets raw-text elements wrong (`<script>` content would be scanned for tags), so,
 * like parse5-sax-parser, this follows the tree builder's feedback to the tokenizer: the raw-text,
 * RCDATA, script and PLAINTEXT switches, and the SVG/MathML namespace stack (which decides whether
 * `<![CDATA[` opens a CDATA section). It is a port of parse5-sax-parser's `ParserFeedbackSimulator`
 * (MIT), which that package does not export, with a choice of scripting mode. As in that package the
 * namespace tracking is an approximation of the tree builder's; it only matters inside `<svg>` and
 * `<math>`.
 *
 * We drive the tokenizer directly rather than through parse5-sax-parser: the SAX parser is a Node
 * stream (two stream objects per document) and accumulates every text run into strings, which made it
 * about 1.4 times slower than this before `TextSkippingTokenizer` made this another 4 times faster.
 */
export function scanTags(source: string, visitor: TagVisitor, options: ScanOptions): void {
  const feedback = new TreeBuilderFeedback(visitor, options.scripting, options.xml === true);
  const tokenizer = options.createTokenizer?.(feedback) ?? new TextSkippingTokenizer({}, feedback);
  feedback.tokenizer = tokenizer;
  if (options.xml === true) tokenizer.inForeignNode = true;
  tokenizer.write(source, true);
}

/**
 * The tokenizer's handler: tracks namespaces, switches the tokenizer into the text modes a tree builder
 * would, and passes tags on. Unlike parse5-sax-parser it does not rename `<image>` to `<img>` or drop
 * the newline after `<pre>`: neither changes which tags there are.
 */
class TreeBuilderFeedback implements TokenHandler {
  tokenizer: Tokenizer | null = null;
  /** Innermost namespace first. */
  private readonly namespaceStack: html.NS[] = [NS.HTML];
  private inForeignContent = false;

  constructor(
    private readonly visitor: TagVisitor,
    private readonly scripting: boolean,
    private readonly xml: boolean,
  ) {}

  onStartTag(token: Token.TagToken): void {
    let tagId = token.tagID;
    if (tagId === $.SVG) this.enterNamespace(NS.SVG);
    else if (tagId === $.MATH) this.enterNamespace(NS.MATHML);

    let namespace = this.currentNamespace();
    if (this.inForeignContent) {
      if (foreignContent.causesExit(token)) {
        // An HTML element such as <p> or <div> ends foreign content; it is created as HTML.
        this.leaveNamespace();
        namespace = this.currentNamespace();
      } else {
        if (namespace === NS.MATHML) foreignContent.adjustTokenMathMLAttrs(token);
        else if (namespace === NS.SVG) {
          foreignContent.adjustTokenSVGTagName(token);
          foreignContent.adjustTokenSVGAttrs(token);
        }
        foreignContent.adjustTokenXMLAttrs(token);
        tagId = token.tagID;
        // <foreignObject>, <annotation-xml encoding="text/html"> etc. hold HTML again.
        if (!token.selfClosing && foreignContent.isIntegrationPoint(tagId, namespace, token.attrs)) {
          this.enterNamespace(NS.HTML);
        }
      }
    } else if (!(this.xml && token.selfClosing)) {
      this.switchTokenizerFor(tagId);
    }
    this.visitor.startTag(token, namespace);
  }

  onEndTag(token: Token.TagToken): void {
    const namespace = this.currentNamespace();
    let tagId = token.tagID;
    if (!this.inForeignContent) {
      const outer = this.namespaceStack[1];
      if (outer === NS.SVG) {
        const adjusted = foreignContent.SVG_TAG_NAMES_ADJUSTMENT_MAP.get(token.tagName);
        if (adjusted !== undefined) tagId = html.getTagID(adjusted);
      }
      if (outer !== undefined && foreignContent.isIntegrationPoint(tagId, outer, token.attrs)) {
        this.leaveNamespace();
      }
    } else if ((tagId === $.SVG && namespace === NS.SVG) || (tagId === $.MATH && namespace === NS.MATHML)) {
      this.leaveNamespace();
    }
    // Keep end tag names consistent with start tags (`</foreignobject>` -> `</foreignObject>`).
    if (this.currentNamespace() === NS.SVG) foreignContent.adjustTokenSVGTagName(token);
    this.visitor.endTag(token, namespace);
  }

  // Text, comments and the doctype carry no tags.
  onCharacter(): void {}
  onNullCharacter(): void {}
  onWhitespaceCharacter(): void {}
  onComment(): void {}
  onDoctype(): void {}
  onEof(): void {}

  private switchTokenizerFor(tagId: html.TAG_ID): void {
    const tokenizer = this.tokenizer;
    if (tokenizer === null) return;
    switch (tagId) {
      case $.TEXTAREA:
      case $.TITLE:
        tokenizer.state = TokenizerMode.RCDATA;
        break;
      case $.PLAINTEXT:
        tokenizer.state = TokenizerMode.PLAINTEXT;
        break;
      case $.SCRIPT:
        tokenizer.state = TokenizerMode.SCRIPT_DATA;
        break;
      case $.STYLE:
      case $.IFRAME:
      case $.XMP:
      case $.NOEMBED:
      case $.NOFRAMES:
        tokenizer.state = TokenizerMode.RAWTEXT;
        break;
      case $.NOSCRIPT:
        if (this.scripting) tokenizer.state = TokenizerMode.RAWTEXT;
        break;
      default:
    }
  }

  private currentNamespace(): html.NS {
    return this.namespaceStack[0] ?? NS.HTML;
  }

  private enterNamespace(namespace: html.NS): void {
    this.namespaceStack.unshift(namespace);
    this.syncForeignFlag();
  }

  private leaveNamespace(): void {
    // Never pop the document's own HTML namespace, whatever stray end tags say.
    if (this.namespaceStack.length > 1) this.namespaceStack.shift();
    this.syncForeignFlag();
  }

  private syncForeignFlag(): void {
    this.inForeignContent = this.currentNamespace() !== NS.HTML;
    if (this.tokenizer !== null) this.tokenizer.inForeignNode = this.inForeignContent || this.xml;
  }
}
