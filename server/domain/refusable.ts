import { transaction, type Db, type Tx } from "@/server/db";
import { AppError } from "@/server/errors";

// A transaction that may end in a refusal (stale version, permission, a rule the change breaks):
// `refuse(error)`, or any AppError thrown inside, rolls everything back and reaches the caller
// exactly as written. (The transaction helper prefixes the messages of errors thrown through it,
// for logs; a refusal is an answer for the user, not a failure, so it travels wrapped.)

class Refusal {
  constructor(readonly error: AppError) {}
}

export type Refuse = (error: AppError) => never;

const refuse: Refuse = (error) => {
  throw new Refusal(error);
};

export async function refusableTransaction<T>(db: Db, name: string, fn: (tx: Tx, refuse: Refuse) => Promise<T>): Promise<T> {
  try {
    return await transaction(db, name, async (tx) => {
      try {
        return await fn(tx, refuse);
      } catch (err) {
        throw err instanceof AppError ? new Refusal(err) : err;
      }
    });
  } catch (err) {
    if (err instanceof Refusal) throw err.error;
    throw err;
  }
}
