/**
 * Minor units as the currency's major ones ("1,234.50 USD"), the same on every page and in every download; `digits`
 * is the currency's minor digits (0 for yen: "5,000 JPY").
 */
export const money = (amount: number, currency: string, digits = 2) =>
  `${(amount / 10 ** digits).toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits })} ${currency}`
