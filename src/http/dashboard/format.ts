/** Minor units as the currency's major ones ("1,234.50 USD"), the same on every page and in every download. */
export const money = (amount: number, currency: string) =>
  `${(amount / 100).toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`
