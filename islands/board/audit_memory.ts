/**
 * The board's memory of its audits (page §10.8), kept in this browser's IndexedDB: per ledger, what
 * the last passing audit verified (lib/client/audit/remembered_audit.ts). An audit reads it first
 * and checks only what the server sealed since; only an audit that passed replaces it, so a server
 * that contradicts it keeps failing. Where IndexedDB is missing or refuses, nothing is remembered
 * and every audit is a whole one.
 * @module
 */
import { auditLedger, type AuditOptions, type AuditReport } from "../../lib/client/audit/audit.ts";
import type { AuditSource } from "../../lib/client/audit/reads.ts";
import {
  type AuditMemory,
  memorySource,
  readAuditMemory,
  storedMemory,
} from "../../lib/client/audit/remembered_audit.ts";

/** The database, and its one store: memories by ledger name. */
const DATABASE = "ringvote-audit";
const STORE = "ledgers";

/** The name a ledger's memory is kept under: its round (round 1 is the election). */
export function memoryName(round: number): string {
  return `round/${round}`;
}

function openDatabase(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error("the audit memory is open in an older page"));
  });
}

/** Runs `use` on the store in a transaction of `mode`; answers its request's result. */
async function withStore<T>(
  mode: IDBTransactionMode,
  use: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T> {
  const db = await openDatabase();
  try {
    return await new Promise<T>((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const request = use(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error ?? request.error);
      transaction.onabort = () => reject(transaction.error ?? new Error("aborted"));
    });
  } finally {
    db.close();
  }
}

/** True where this page may keep an audit's memory. */
export function canRemember(): boolean {
  return typeof indexedDB !== "undefined";
}

/** The memory kept for `name`, when there is one whole; null otherwise (or without IndexedDB). */
export async function loadAuditMemory(name: string): Promise<AuditMemory | null> {
  if (!canRemember()) return null;
  try {
    return readAuditMemory(await withStore("readonly", (store) => store.get(name)));
  } catch {
    return null;
  }
}

/** Keeps `memory` for `name`, in place of the one kept; false when the browser refused. */
export async function saveAuditMemory(name: string, memory: AuditMemory): Promise<boolean> {
  if (!canRemember()) return false;
  try {
    await withStore("readwrite", (store) => store.put(storedMemory(memory), name));
    return true;
  } catch {
    return false;
  }
}

/**
 * A board audit held to this browser's memory: its report, without the memory it leaves (kept in
 * IndexedDB, not in the page: a tag and a vote id per vote), and the height it took up from.
 */
export type RememberedRun = { report: AuditReport; from: number | null };

/**
 * The audit of the ledger of round `round` through `api` (no memory for the practice ledger, null,
 * which a reset replaces): held to the memory kept for it, whose votes are not verified again
 * unless `all`; the memory is replaced by what this audit verified only when it passed.
 */
export async function auditRemembering(
  api: AuditSource,
  { round, all, ...opts }: AuditOptions & { round: number | null; all: boolean },
): Promise<RememberedRun> {
  const name = round === null ? null : memoryName(round);
  const memory = name === null ? null : await loadAuditMemory(name);
  const report = memory === null
    ? await auditLedger(api, opts)
    : await auditLedger(memorySource(api, memory, { readAllBlocks: all }), {
      ...opts,
      memory,
      verifyAll: all,
    });
  if (name !== null && report.ok && report.memory !== null) {
    await saveAuditMemory(name, report.memory);
  }
  return {
    report: { ...report, memory: null },
    from: memory === null || all ? null : memory.height,
  };
}
