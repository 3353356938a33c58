/** Helpers to look inside the report's charts. */

/** The SVG of one chart of the report, by its id. */
export function chartSvg(html: string, id: string): string {
  const m = html.match(new RegExp(`<figure class="chart" id="chart-${id}">([\\s\\S]*?)</figure>`));
  return m?.[1] ?? '';
}

/** Drawn items of one kind (Vega labels each with its role: bar, point, line mark, rule mark). */
export function countMarks(svg: string, role: string): number {
  return svg.split(`aria-roledescription="${role}"`).length - 1;
}
