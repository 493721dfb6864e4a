// Private: the store's schema migrations, applied in order on open. The
// database's PRAGMA user_version says how many have run. Never edit a
// migration that has shipped; append a new one.
#ifndef WEFT_SRC_STORE_MIGRATIONS_H_
#define WEFT_SRC_STORE_MIGRATIONS_H_

#include "store/sqlite_db.h"

namespace weft::store {

// Number of migrations (= the user_version of an up-to-date database).
int migration_count();

// Runs every migration above the database's user_version, each in its own
// transaction. Errors: kDataLoss when the database is newer than this build.
Status migrate(sqlite::Db& db);

}  // namespace weft::store

#endif  // WEFT_SRC_STORE_MIGRATIONS_H_
