// The attack lab (/lab): it prepares its own voters and honest votes in this browser, then lets
// the demonstrator throw every attack at the running server and look at the lab voter's vote
// through a lying-server lens — all on the lab's practice ledger (`/api/lab/…`), never the
// election's. Each section is a component of islands/lab/; the state is here.
import { useEffect, useMemo, useState } from "react";
import AttackCard, { type AttackResult } from "./lab/AttackCard.tsx";
import LabSection from "./lab/LabSection.tsx";
import CardAttackCard, { type CardAttackResult } from "./lab/CardAttackCard.tsx";
import { CARD_ATTACKS, type CardAttackId, runCardAttack } from "../lib/client/lab/card_attacks.ts";
import LabPreparation, { type Preparation } from "./lab/LabPreparation.tsx";
import LieCard, { type LieResult } from "./lab/LieCard.tsx";
import { type Attack, type AttackId, ATTACKS } from "../lib/client/lab/attacks.ts";
import type { SeenHeads } from "../lib/client/log/heads.ts";
import {
  labClients,
  LabFullError,
  type LabIO,
  type LabReady,
  prepareLab,
  readLedger,
  runAttack,
  runLie,
  startFreshLedger,
} from "../lib/client/lab/lab.ts";
import { type LieId, LIES } from "../lib/client/lab/lies.ts";
import { messageOf } from "../lib/client/text.ts";

/** Props the server renders the lab with. */
export type AttackLabProps = { ringSize: number };

const ATTACKS_INTRO = "Each attack is built in this browser from the lab's own keys and sent " +
  "for real. A green card means the server refused it and the ledger did not change.";

const CARDS_INTRO = "A meeting's round can admit card holders only: each printed join card " +
  "signs one key per round. These attacks go to the lab's practice directory, which admits the " +
  "lab's public practice cards. A green card means the server refused it.";

function lensIntro(viewer: string): string {
  return `The lens shows ${viewer}'s vote as a dishonest server would. It only changes what ` +
    "this page is told — the ledger is untouched. A green card means the voter's own checks " +
    "caught the lie.";
}

function browserIO(): LabIO {
  return { storage: localStorage, ...labClients(fetch), log: (message) => console.error(message) };
}

/** The lab: preparation, the attacks, the lying-server lens. */
export default function AttackLab({ ringSize }: AttackLabProps) {
  const io = useMemo(browserIO, []);
  const [preparation, setPreparation] = useState<Preparation>({
    state: "working",
    line: "Preparing the lab…",
  });
  const [lab, setLab] = useState<LabReady | null>(null);
  const [attacks, setAttacks] = useState<Partial<Record<AttackId, AttackResult>>>({});
  const [lies, setLies] = useState<Partial<Record<LieId, LieResult>>>({});
  const [cardRuns, setCardRuns] = useState<Partial<Record<CardAttackId, CardAttackResult>>>({});
  const [running, setRunning] = useState<string | null>(null);
  const [seen, setSeen] = useState<SeenHeads>({ key: null, heads: [] });

  async function prepare() {
    setPreparation({ state: "working", line: "Preparing the lab…" });
    try {
      const ready = await prepareLab(io, {
        count: ringSize + 2,
        ringSize,
        progress: (line) => setPreparation({ state: "working", line }),
      });
      const ledger = await readLedger(io.api).catch(() => null);
      // Ready and its line arrive together: the page never says ready while the line still waits.
      setLab(ready);
      setPreparation({ state: "ready", voters: ringSize + 2, viewer: ready.viewer, ledger });
    } catch (error) {
      const state = error instanceof LabFullError ? "full" : "failed";
      setPreparation({ state, problem: messageOf(error) });
    }
  }

  /** Starts a fresh practice ledger, forgets every result of the old one, and prepares again. */
  async function startFresh() {
    setLab(null);
    setPreparation({ state: "working", line: "Starting a fresh practice ledger…" });
    try {
      await startFreshLedger(io);
    } catch (error) {
      setPreparation({ state: "failed", problem: messageOf(error) });
      return;
    }
    setAttacks({});
    setLies({});
    setCardRuns({});
    setSeen({ key: null, heads: [] });
    await prepare();
  }

  useEffect(() => {
    prepare();
  }, []);

  /** Runs `work` as card `id`, keeping its result, or the problem that stopped it, with `keep`. */
  async function perform<R>(
    id: string,
    work: (ready: LabReady) => Promise<R>,
    keep: (result: R | { problem: string }) => void,
  ) {
    if (!lab) return;
    setRunning(id);
    try {
      keep(await work(lab));
    } catch (error) {
      keep({ problem: messageOf(error) });
    } finally {
      setRunning(null);
    }
  }

  function attack(attack: Attack) {
    return perform(
      attack.id,
      (ready) => runAttack(io.api, { attack, input: ready.input }),
      (result) => setAttacks((all) => ({ ...all, [attack.id]: result })),
    );
  }

  function cardAttack(id: CardAttackId) {
    return perform(
      id,
      () => runCardAttack(fetch, id, { card: Math.floor(Math.random() * 8) }),
      (result) => setCardRuns((all) => ({ ...all, [id]: result })),
    );
  }

  function lie(id: LieId) {
    return perform(
      id,
      async (ready) => {
        const run = await runLie(io, { lie: id, viewer: ready.viewer, seen });
        setSeen(run.seen);
        return run;
      },
      (result) => setLies((all) => ({ ...all, [id]: result })),
    );
  }

  const busy = lab === null || running !== null;
  const control = (attribute: string, id: string, label: string, onRun: () => void) => ({
    control: { [attribute]: id },
    label,
    running: running === id,
    disabled: busy,
    onRun,
  });
  return (
    <div class="lab" data-ready={lab ? "true" : "false"}>
      <LabPreparation preparation={preparation} onRetry={prepare} onStartFresh={startFresh} />
      <LabSection
        title="Attacks on the voting server"
        intro={ATTACKS_INTRO}
      >
        {ATTACKS.map((a) => (
          <AttackCard
            key={a.id}
            attack={a}
            result={attacks[a.id] ?? null}
            run={control("data-attack", a.id, "Run this attack", () => attack(a))}
          />
        ))}
      </LabSection>
      <LabSection title="Join cards: one key per card" intro={CARDS_INTRO}>
        {CARD_ATTACKS.map((a) => (
          <CardAttackCard
            key={a.id}
            attack={a}
            result={cardRuns[a.id] ?? null}
            run={control("data-card-attack", a.id, "Run this attack", () => cardAttack(a.id))}
          />
        ))}
      </LabSection>
      <LabSection
        title="What if the server lies?"
        intro={lensIntro(lab?.viewer ?? "the lab voter")}
      >
        {LIES.map((l) => (
          <LieCard
            key={l.id}
            lie={l}
            result={lies[l.id] ?? null}
            run={control("data-lie", l.id, "Look through the lying lens", () => lie(l.id))}
          />
        ))}
      </LabSection>
    </div>
  );
}
