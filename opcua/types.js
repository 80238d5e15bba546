'use strict';
// IEC types as OPC UA types (docs/opcua.md "Types"), and the runtime's typed JSON values
// (docs/harness.md "Values") as OPC UA Variants.
const { DataType, VariantArrayType, Variant, coerceInt64, coerceUInt64 } = require('node-opcua');

// IEC elementary type -> OPC UA built-in type. TIME, LTIME, TOD and LTOD are Durations
// (milliseconds, a Double); DATE, LDATE, DT and LDT are DateTimes (UTC); enumerations are Int32.
const kElementary = {
  BOOL: DataType.Boolean,
  SINT: DataType.SByte,
  INT: DataType.Int16,
  DINT: DataType.Int32,
  LINT: DataType.Int64,
  USINT: DataType.Byte,
  UINT: DataType.UInt16,
  UDINT: DataType.UInt32,
  ULINT: DataType.UInt64,
  BYTE: DataType.Byte,
  WORD: DataType.UInt16,
  DWORD: DataType.UInt32,
  LWORD: DataType.UInt64,
  REAL: DataType.Float,
  LREAL: DataType.Double,
  STRING: DataType.String,
  WSTRING: DataType.String,
  CHAR: DataType.String,
  WCHAR: DataType.String,
  TIME: DataType.Double,
  LTIME: DataType.Double,
  TOD: DataType.Double,
  LTOD: DataType.Double,
  TIME_OF_DAY: DataType.Double,
  DATE: DataType.DateTime,
  LDATE: DataType.DateTime,
  DT: DataType.DateTime,
  LDT: DataType.DateTime,
  DATE_AND_TIME: DataType.DateTime,
  ENUM: DataType.Int32,
};

const kDurations = new Set(['TIME', 'LTIME', 'TOD', 'LTOD', 'TIME_OF_DAY']);
const kDates = new Set(['DATE', 'LDATE', 'DT', 'LDT', 'DATE_AND_TIME']);

// The shape of a typed value: { dataType, arrayDimensions (absent: a scalar), iecType }, or
// { struct: true } for a STRUCT (served as an object of its fields), or null when OPC UA has no
// plain type for it (an ARRAY of STRUCTs: left out).
function shapeOf(typed) {
  if (typed.type === 'ARRAY') {
    const first = typed.elements && typed.elements[0];
    const element = first ? shapeOf(first) : null;
    if (!element || element.arrayDimensions) {
      return null;
    }
    const dims = typed.dimensions.map(([low, high]) => high - low + 1);
    return { dataType: element.dataType, iecType: element.iecType, arrayDimensions: dims, bounds: typed.dimensions };
  }
  if (typed.type === 'STRUCT') {
    return { struct: true };
  }
  const dataType = kElementary[typed.type];
  return dataType === undefined ? null : { dataType, iecType: typed.type };
}

// NaN and the infinities come as strings.
function number(value) {
  if (typeof value === 'string') {
    return value === 'NaN' ? NaN : value === 'Infinity' ? Infinity : value === '-Infinity' ? -Infinity : Number(value);
  }
  return value;
}

function scalarValue(typed, dataType) {
  if (typed.type === 'ENUM') {
    return typed.numeric;
  }
  if (kDurations.has(typed.type)) {
    return Number(BigInt(typed.nanos)) / 1e6;
  }
  if (kDates.has(typed.type)) {
    return new Date(Number(BigInt(typed.nanos) / 1000000n));
  }
  switch (dataType) {
    case DataType.Int64:
      return coerceInt64(String(typed.value));
    case DataType.UInt64:
      return coerceUInt64(String(typed.value));
    case DataType.Float:
    case DataType.Double:
      return number(typed.value);
    default:
      return typed.value;
  }
}

// The Variant of a typed value of `shape`.
function toVariant(typed, shape) {
  if (!shape.arrayDimensions) {
    return new Variant({
      dataType: shape.dataType,
      arrayType: VariantArrayType.Scalar,
      value: scalarValue(typed, shape.dataType),
    });
  }
  const values = typed.elements.map((e) => scalarValue(e, shape.dataType));
  const multi = shape.arrayDimensions.length > 1;
  return new Variant({
    dataType: shape.dataType,
    arrayType: multi ? VariantArrayType.Matrix : VariantArrayType.Array,
    dimensions: multi ? shape.arrayDimensions : undefined,
    value: values,
  });
}

// 64-bit words as node-opcua gives them ([high, low] 32-bit halves) -> the decimal text.
function int64Text(value, signed) {
  const big = (BigInt(value[0] >>> 0) << 32n) | BigInt(value[1] >>> 0);
  return (signed ? BigInt.asIntN(64, big) : big).toString();
}

function scalarTyped(value, shape) {
  const iec = shape.iecType;
  if (iec === 'ENUM') {
    return String(value); // an enumeration takes its number as a literal
  }
  if (kDurations.has(iec)) {
    return { type: iec, nanos: Math.round(value * 1e6) };
  }
  if (kDates.has(iec)) {
    return { type: iec, nanos: value.getTime() * 1e6 };
  }
  switch (shape.dataType) {
    case DataType.Int64:
    case DataType.UInt64:
      // Exact as an IEC literal: a JSON number would pass through a double.
      return int64Text(value, shape.dataType === DataType.Int64);
    case DataType.Float:
    case DataType.Double:
      return { type: iec, value: Number.isFinite(value) ? value : String(value) };
    default:
      return { type: iec, value };
  }
}

// The value var.write takes for a Variant written to a variable of `shape` (its type already
// checked by the server): typed JSON, or an IEC literal where typed JSON would lose digits.
function toWritable(variant, shape) {
  if (!shape.arrayDimensions) {
    return scalarTyped(variant.value, shape);
  }
  const elements = [...variant.value].map((v) => {
    const typed = scalarTyped(v, shape);
    return typeof typed === 'string' ? { type: shape.iecType, value: typed } : typed;
  });
  return { type: 'ARRAY', dimensions: shape.bounds, elements };
}

module.exports = { shapeOf, toVariant, toWritable };
