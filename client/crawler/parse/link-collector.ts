import { html, type Token } from 'parse5';
import { isRobotsMetaName, parseRobotsDirectives } from './meta-robots.js';
import { refreshTarget } from './refresh.js';
import type { TagVisitor } from './tag-scanner.js';

const $ = html.TAG_ID;
const NS = html.NS;

/**
 * Collects, while the tags stream by, the raw hrefs of a page and what else decides what its links
 * are: `<base href>`, robots `<meta>`, `<link rel=canonical>` and `<meta http-equiv=refresh>`.
 * Resolution comes after the scan, once the base URL is known (see `extractLinks`).
 */
export class LinkCollector implements TagVisitor {
  readonly hrefs: string[] = [];
  /** `nofollow[i]`: `hrefs[i]` came from an element whose rel contains `nofollow`. */
  readonly nofollow: boolean[] = [];
  baseHref: string | null = null;
  metaNofollow = false;
  /** The href of the first `<link rel=canonical>` before `<body>`. */
  canonicalHref: string | null = null;
  /** The URL of the first `<meta http-equiv=refresh>` that names one; also pushed to `hrefs`. */
  refreshHref: string | null = null;
  /** How many `<template>` elements we are inside; their content is not part of the page. */
  private templateDepth = 0;
  /** A `<body>` start tag was seen: a canonical link after it is ignored, as search engines do. */
  private inBody = false;

  startTag(token: Token.TagToken, namespace: html.NS): void {
    const tagId = token.tagID;
    if (namespace !== NS.HTML) {
      if (tagId === $.A && namespace === NS.SVG && this.templateDepth === 0) this.addSvgLink(token);
      return;
    }
    if (tagId === $.TEMPLATE) {
      this.templateDepth++;
      return;
    }
    if (this.templateDepth > 0) return;
    if (tagId === $.A || tagId === $.AREA) {
      const href = attribute(token, 'href');
      if (href !== null) this.addLink(href, attribute(token, 'rel'));
    } else if (tagId === $.BASE) {
      if (this.baseHref === null) this.baseHref = attribute(token, 'href');
    } else if (tagId === $.META) {
      this.readMeta(token);
    } else if (tagId === $.LINK) {
      if (this.canonicalHref === null && !this.inBody) this.readLink(token);
    } else if (tagId === $.BODY) {
      this.inBody = true;
    }
  }

  endTag(token: Token.TagToken, namespace: html.NS): void {
    if (token.tagID === $.TEMPLATE && namespace === NS.HTML && this.templateDepth > 0) {
      this.templateDepth--;
    }
  }

  private addLink(href: string, rel: string | null): void {
    this.hrefs.push(href);
    this.nofollow.push(rel !== null && relHas(rel, 'nofollow'));
  }

  /** SVG 2 `href` wins over the older `xlink:href` when an element has both. */
  private addSvgLink(token: Token.TagToken): void {
    let href: string | null = null;
    for (const attr of token.attrs) {
      if (attr.name !== 'href') continue;
      if (attr.prefix === undefined) {
        href = attr.value;
        break;
      }
      if (attr.prefix === 'xlink' && href === null) href = attr.value;
    }
    if (href !== null) this.addLink(href, attribute(token, 'rel'));
  }

  private readMeta(token: Token.TagToken): void {
    const content = attribute(token, 'content');
    if (content === null) return;
    const name = attribute(token, 'name');
    if (name !== null) {
      if (isRobotsMetaName(name) && parseRobotsDirectives(content).nofollow) this.metaNofollow = true;
      return;
    }
    const httpEquiv = attribute(token, 'http-equiv');
    if (this.refreshHref === null && httpEquiv !== null && httpEquiv.trim().toLowerCase() === 'refresh') {
      // A refresh to another URL is a redirect by markup: its target is a link to follow.
      const target = refreshTarget(content);
      if (target !== null) {
        this.refreshHref = target;
        this.addLink(target, null);
      }
    }
  }

  private readLink(token: Token.TagToken): void {
    const rel = attribute(token, 'rel');
    if (rel === null || !relHas(rel, 'canonical')) return;
    const href = attribute(token, 'href');
    if (href !== null) this.canonicalHref = href;
  }
}

/** The value of an unprefixed attribute; names are already lower-case and unique per tag. */
function attribute(token: Token.TagToken, name: string): string | null {
  for (const attr of token.attrs) {
    if (attr.name === name && attr.prefix === undefined) return attr.value;
  }
  return null;
}

/** `rel` is a case-insensitive, ASCII-whitespace-separated token list. */
function relHas(rel: string, token: string): boolean {
  const lower = rel.toLowerCase();
  if (!lower.includes(token)) return false;
  return lower.split(/[\t\n\f\r ]+/).includes(token);
}
