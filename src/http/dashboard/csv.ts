/**
 * CSV for the dashboard's downloads (RFC 4180): fields separated by commas, lines by CRLF, a field quoted when it
 * holds a comma, a quote or a line break, its quotes doubled. A cell a spreadsheet would read as a formula (one
 * beginning with `=`, `+`, `-`, `@`, a tab or a carriage return) is prefixed with `'`, so a name an API key was
 * given cannot run in the spreadsheet of whoever opens the file.
 */

const formulaStart = /^[=+\-@\t\r]/

/** One cell as a spreadsheet will only ever show it, quoted when RFC 4180 asks. */
export const csvCell = (value: string | null): string => {
  const text = value === null ? "" : formulaStart.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** A whole file: the header line, then one line per row, each ended by CRLF. */
export const csvOf = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | null>>): string =>
  [header, ...rows].map((row) => `${row.map(csvCell).join(",")}\r\n`).join("")
