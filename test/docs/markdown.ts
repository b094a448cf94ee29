import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { filesUnder } from './files.js';

/** A link found in a Markdown file: where it is, and what it points at as written. */
export interface MarkdownLink {
  readonly line: number;
  readonly target: string;
}

/** A link that does not resolve, with the reason. */
export interface BrokenLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
  readonly why: string;
}

/**
 * Replaces fenced code blocks (and, unless `keepInline`, inline code spans) with blank text of the same
 * shape, so that what looks like a link or a heading inside code is not taken for one, and line numbers
 * stay right.
 */
export function blankCode(markdown: string, keepInline = false): string {
  let fence: string | null = null;
  return markdown
    .split('\n')
    .map((line) => {
      const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
      if (fence !== null) {
        if (opener && opener[1]!.startsWith(fence)) fence = null;
        return '';
      }
      if (opener) {
        fence = opener[1]!;
        return '';
      }
      return keepInline ? line : line.replace(/(`+)(.+?)\1/g, (m) => ' '.repeat(m.length));
    })
    .join('\n');
}

/**
 * GitHub's anchor for a heading: the heading's text as rendered, in lower case, without punctuation other
 * than "-" and "_", spaces turned into "-" (what github-slugger does).
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|\W)[*_](.+?)[*_](?=\W|$)/g, '$1$2');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings (deduplicated as GitHub does) and HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  // Headings may hold inline code, whose text counts.
  const code = blankCode(markdown, true);
  for (const line of code.split('\n')) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = githubSlug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** Inline links and images (`[text](target)`), and reference definitions (`[name]: target`), outside code. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  blankCode(markdown)
    .split('\n')
    .forEach((line, index) => {
      for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)) {
        links.push({ line: index + 1, target: m[1]!.replace(/^<|>$/g, '') });
      }
      const definition = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
      if (definition) links.push({ line: index + 1, target: definition[1]!.replace(/^<|>$/g, '') });
    });
  return links;
}

/**
 * Checks every relative link and anchor of the given Markdown files (paths relative to `root`): the file or
 * folder must exist inside the repository, and an anchor must be one of the target's headings. Links with a
 * scheme (https:, mailto:) are left alone; a line anchor (#L12) is accepted on a file that is not Markdown.
 */
export function brokenLinks(root: string, files: readonly string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsFor = (path: string) => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  for (const file of files) {
    const absolute = resolve(root, file);
    for (const link of linksOf(readFileSync(absolute, 'utf8'))) {
      const why = checkTarget(root, absolute, link.target, anchorsFor);
      if (why) broken.push({ file, line: link.line, target: link.target, why });
    }
  }
  return broken;
}

function checkTarget(
  root: string,
  from: string,
  target: string,
  anchorsFor: (path: string) => Set<string>,
): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  if (target.startsWith('/')) return 'an absolute path: link relatively, from this file';
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const path = pathPart === '' ? from : resolve(dirname(from), pathPart);
  const inside = relative(root, path);
  if (inside.startsWith('..') || inside.startsWith(sep)) return 'points outside the repository';
  if (!existsSync(path)) return `there is no ${inside}`;
  if (anchor === null) return null;
  if (!path.endsWith('.md')) {
    if (statSync(path).isFile() && /^L\d+(-L\d+)?$/.test(anchor)) return null;
    return `#${anchor}: only Markdown files (or #L lines of a file) have anchors`;
  }
  if (anchorsFor(path).has(anchor)) return null;
  return `${inside} has no heading with the anchor #${anchor}`;
}

/** The repository's documentation: README.md and every Markdown file under docs/, relative to `root`. */
export function documentationFiles(root: string): string[] {
  return ['README.md', ...filesUnder(root, 'docs', /\.md$/)];
}
