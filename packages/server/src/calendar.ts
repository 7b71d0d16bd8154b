/** Calendar days as `YYYY-MM-DD` strings: the contract's rules (`@mdq/contract`), for server modules. */
export {
  addDays,
  fromEpochDay,
  inclusiveDayCount,
  isCalendarDate,
  isTimeZone,
  todayIn,
  toEpochDay,
} from "@mdq/contract";
