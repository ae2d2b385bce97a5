// Which driver errors are database faults (503, the process lives on) and which are not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DatabaseUnavailable,
  isConnectionError,
  isDatabaseFault,
  isStatementTimeout,
  toDatabaseError,
} from './pg-errors.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('connection-level failures are recognised by SQLSTATE, socket code and driver message', () => {
  const faults: unknown[] = [
    withCode('08006'),
    withCode('08001'),
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('57P02'),
    withCode('57P03', 'the database system is starting up'),
    withCode('53300', 'sorry, too many clients already'),
    withCode('ECONNRESET', 'read ECONNRESET'),
    withCode('ECONNREFUSED'),
    withCode('EPIPE'),
    withCode('ETIMEDOUT'),
    withCode('EHOSTUNREACH'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Client has encountered a connection error and is not queryable'),
    Object.assign(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]), {}),
  ];
  for (const e of faults) {
    assert.ok(isConnectionError(e), String(e));
    const wrapped = toDatabaseError(e);
    assert.ok(wrapped instanceof DatabaseUnavailable && wrapped.reason === 'connection', String(e));
    assert.equal(toDatabaseError(wrapped), wrapped, 'wrapping twice changes nothing');
  }
});

test('statement timeouts, server-side or client-side, are database faults of their own kind', () => {
  for (const e of [
    withCode('57014', 'canceling statement due to statement timeout'),
    new Error('Query read timeout'),
  ]) {
    assert.ok(isStatementTimeout(e));
    assert.equal((toDatabaseError(e) as DatabaseUnavailable).reason, 'timeout');
    assert.ok(isDatabaseFault(toDatabaseError(e)));
  }
});

test('errors of the statement or the caller stay as they are', () => {
  for (const e of [
    withCode('23505'),
    withCode('40001'),
    withCode('22P02'),
    new Error('expected one row, got 0'),
    null,
    'text',
  ]) {
    assert.equal(isDatabaseFault(e), false, String(e));
    assert.equal(toDatabaseError(e), e);
  }
});
