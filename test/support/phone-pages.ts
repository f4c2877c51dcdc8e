/**
 * What a phone cannot finish, on a Portal page as it is: the one check every Portal test in a
 * browser runs on the pages it visits, and the sweep (test/portal/phone-pages.test.ts) runs on
 * every page the Portal renders. At 375 px (PHONE):
 * - the page is wider than the screen (a long word, a table, a field): a sideways scroll;
 * - a form field's text is under 16 px (a phone zooms in when it takes focus), or a field is
 *   narrower than the others of its column (a text field is as wide as its box);
 * - a radio button or a checkbox is not on the line of its label;
 * - the page itself (its `main`) has no link: only the browser's Back leads anywhere.
 * Also the list of the Portal's pages, read from its router: a page added without a place in
 * the sweep fails the sweep.
 */
import type { Router } from 'express';
import type { Page } from 'playwright-core';
import { portalRouter } from '../../server/portal/portal-router';
import type { AppDeps } from '../../server/deps';
import { PHONE } from './portal-chromium';

// The check runs in the page (page.evaluate): the browser's globals, which the server's compilation does not declare.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const getComputedStyle: (element: any) => any;
declare const Node: { TEXT_NODE: number };
type HTMLElement = any;
type HTMLAnchorElement = any;

/** Each problem as `name: what`; [] when a phone can finish the page. */
export async function phoneProblems(page: Page, name = 'page'): Promise<string[]> {
  // The page as the person sees it: its stylesheet applied (a click's navigation resolves before).
  await page.waitForLoadState('load');
  const found = await page.evaluate((screenWidth: number) => {
    const problems: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > screenWidth) {
      // The widest culprit, to say what to fix.
      let widest = '';
      let right = screenWidth;
      for (const element of Array.from(document.body.querySelectorAll('*') as HTMLElement[])) {
        const box = element.getBoundingClientRect();
        if (box.right > right + 0.5) {
          right = box.right;
          widest = `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${element.className && typeof element.className === 'string' ? `.${element.className.split(' ')[0]}` : ''}`;
        }
      }
      problems.push(`${root.scrollWidth} px wide (${widest || 'the page'} reaches ${Math.round(right)} px)`);
    }
    const visible = (element: HTMLElement) => element.offsetParent !== null || getComputedStyle(element).position === 'fixed';
    const fields = Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea') as HTMLElement[]).filter(visible);
    for (const field of fields) {
      const label = field.id ? `#${field.id}` : `[name=${field.getAttribute('name')}]`;
      const type = field.getAttribute('type');
      if (type === 'radio' || type === 'checkbox') {
        const text = field.closest('label') ?? (field.id ? document.querySelector(`label[for="${field.id}"]`) : null);
        if (!text) problems.push(`${label} has no label`);
        else {
          const a = field.getBoundingClientRect();
          const b = text === field.closest('label') ? Array.from(text.childNodes as any[]).find((node: any) => node.nodeType === Node.TEXT_NODE && node.textContent!.trim() !== '') : text;
          const range = document.createRange();
          if (b) range.selectNodeContents(b);
          const box = b ? range.getBoundingClientRect() : text.getBoundingClientRect();
          // Beside: the label's first line starts on the field's line, to its right.
          if (box.top > a.bottom || box.left < a.right - 1) problems.push(`${label} is not beside its label`);
        }
        continue;
      }
      const size = parseFloat(getComputedStyle(field).fontSize);
      if (size < 16) problems.push(`${label} text is ${size} px`);
      const box = field.parentElement!;
      const style = getComputedStyle(box);
      const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (field.offsetWidth < room - 1) problems.push(`${label} is ${field.offsetWidth} px wide in ${Math.round(room)} px`);
    }
    const links = Array.from(document.querySelectorAll('main a[href]') as HTMLAnchorElement[]).filter((a) => !a.hasAttribute('download') && visible(a));
    if (links.length === 0) problems.push('no link in the page');
    return problems;
  }, PHONE.width);
  return found.map((problem) => `${name}: ${problem}`);
}

/**
 * The paths (as the router writes them: `/accounts/:accountId`) of every GET the Portal serves,
 * the Portal API's under `/api` (the one sub-router the Portal mounts under a path of its own).
 */
export function portalGetPaths(deps: AppDeps): string[] {
  const paths = new Set<string>();
  type Layer = { route?: { path: string | string[]; methods: Record<string, boolean> }; handle?: { stack?: Layer[] }; match?: (path: string) => boolean };
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        if (layer.route.methods.get) for (const path of ([] as string[]).concat(layer.route.path)) paths.add(`${prefix}${path}`);
      } else if (layer.handle?.stack) {
        const underApi = Boolean(layer.match?.('/api/x') && !layer.match?.('/x'));
        walk(layer.handle.stack, underApi ? `${prefix}/api` : prefix);
      }
    }
  };
  walk((portalRouter(deps) as Router & { stack: Layer[] }).stack, '');
  return [...paths].sort();
}
