import type { ComponentChildren } from "preact"
import { type Column, Table } from "./components.js"

/**
 * Small server-rendered charts: SVG drawn from numbers, no script. Each is an image to assistive technology
 * (`role="img"`, named by its `<title>` and a visible summary in words) with its data as a table behind it, in a
 * `<details>` a keyboard opens. Colours are the layout's: bars at least 3:1 against the card's white, text at
 * least 4.5:1. The module is pure: values and their texts in, markup out.
 */

/** One value of a chart: its label (a day, a stage), the number drawn, and the same number as text. */
export interface ChartPoint {
  readonly label: string
  readonly value: number
  readonly text: string
  /** A bar's colour: `primary` (the default), or `muted` for values beside the main series. */
  readonly tone?: "primary" | "muted"
}

const colours = { primary: "#8c1d18", negative: "#2f6f3e", muted: "#55504b", text: "#1f1f1f", rule: "#8a847e" }

/** A number with at most 2 decimals, for the SVG's coordinates. */
const at = (n: number) => String(Math.round(n * 100) / 100)

const width = 600

/**
 * Vertical bars, one per point in order (a day each, say), from a zero line: up for positive values, down (in
 * another colour) for negative ones. The axis shows the largest and smallest values and the first, middle and
 * last labels.
 */
export const ColumnChart = (props: {
  readonly id: string
  readonly title: string
  readonly points: ReadonlyArray<ChartPoint>
}) => {
  const height = 220
  const plot = { left: 90, right: width - 8, top: 14, bottom: height - 26 }
  const values = props.points.map((p) => p.value)
  const max = Math.max(0, ...values)
  const min = Math.min(0, ...values)
  const range = max - min === 0 ? 1 : max - min
  const y = (v: number) => plot.top + ((max - v) / range) * (plot.bottom - plot.top)
  const band = (plot.right - plot.left) / Math.max(1, props.points.length)
  const highest = props.points.find((p) => p.value === max)
  const lowest = props.points.find((p) => p.value === min)
  const ticks = [0, Math.floor((props.points.length - 1) / 2), props.points.length - 1]
  return (
    <svg
      role="img"
      aria-labelledby={`${props.id}-title ${props.id}-summary`}
      viewBox={`0 0 ${width} ${height}`}
      width="100%"
      class="chart"
    >
      <title id={`${props.id}-title`}>{props.title}</title>
      <line x1={plot.left} x2={plot.right} y1={at(y(0))} y2={at(y(0))} stroke={colours.rule} stroke-width="1" />
      <text x={plot.left - 6} y={at(y(0) + 4)} text-anchor="end" font-size="12" fill={colours.text}>
        0
      </text>
      {max > 0 && highest !== undefined ? (
        <text x={plot.left - 6} y={at(y(max) + 4)} text-anchor="end" font-size="12" fill={colours.text}>
          {highest.text}
        </text>
      ) : null}
      {min < 0 && lowest !== undefined ? (
        <text x={plot.left - 6} y={at(y(min) + 4)} text-anchor="end" font-size="12" fill={colours.text}>
          {lowest.text}
        </text>
      ) : null}
      {props.points.map((point, n) =>
        point.value === 0 ? null : (
          <rect
            key={point.label}
            x={at(plot.left + n * band + band * 0.15)}
            width={at(band * 0.7)}
            y={at(y(Math.max(point.value, 0)))}
            height={at(Math.max(1, Math.abs(y(point.value) - y(0))))}
            fill={point.value > 0 ? colours.primary : colours.negative}
          />
        )
      )}
      {[...new Set(ticks)].map((n) =>
        props.points[n] === undefined ? null : (
          <text
            key={n}
            x={at(plot.left + n * band + band / 2)}
            y={height - 6}
            text-anchor={n === 0 ? "start" : n === props.points.length - 1 ? "end" : "middle"}
            font-size="12"
            fill={colours.text}
          >
            {props.points[n].label}
          </text>
        )
      )}
    </svg>
  )
}

/** Horizontal bars, one per point, each labelled with its name and value, scaled to the largest. */
export const BarChart = (props: {
  readonly id: string
  readonly title: string
  readonly points: ReadonlyArray<ChartPoint>
}) => {
  const row = 34
  const height = props.points.length * row + 8
  const bars = { left: 110, right: width - 90 }
  const max = Math.max(1, ...props.points.map((p) => p.value))
  return (
    <svg
      role="img"
      aria-labelledby={`${props.id}-title ${props.id}-summary`}
      viewBox={`0 0 ${width} ${height}`}
      width="100%"
      class="chart"
    >
      <title id={`${props.id}-title`}>{props.title}</title>
      {props.points.map((point, n) => {
        const length = (Math.max(0, point.value) / max) * (bars.right - bars.left)
        const top = 4 + n * row
        return (
          <g key={point.label}>
            <text x={bars.left - 8} y={top + 19} text-anchor="end" font-size="14" fill={colours.text}>
              {point.label}
            </text>
            <rect
              x={bars.left}
              y={top + 4}
              width={at(Math.max(point.value > 0 ? 2 : 0, length))}
              height={row - 10}
              fill={point.tone === "muted" ? colours.muted : colours.primary}
            />
            <text x={at(bars.left + length + 8)} y={top + 19} font-size="14" fill={colours.text}>
              {point.text}
            </text>
          </g>
        )
      })}
    </svg>
  )
}

/**
 * A chart with its summary in words (which names the chart's image with its title) and its data as a table in
 * a `<details>` (`tableSummary` the disclosure's text).
 */
export const ChartFigure = <Row,>(props: {
  readonly id: string
  readonly summary: string
  readonly chart: ComponentChildren
  readonly tableSummary: string
  readonly caption: string
  readonly columns: ReadonlyArray<Column<Row>>
  readonly rows: ReadonlyArray<Row>
  readonly rowKey: (row: Row) => string
}) => (
  <figure class="chart-figure">
    {props.chart}
    <figcaption id={`${props.id}-summary`}>{props.summary}</figcaption>
    <details>
      <summary>{props.tableSummary}</summary>
      <Table
        caption={props.caption}
        columns={props.columns}
        rows={props.rows}
        rowKey={props.rowKey}
        links={{ path: "", params: {}, page: 1, hasNext: false }}
        empty={null}
      />
    </details>
  </figure>
)
