// Where weft keeps per-user and per-workspace state outside the workspace:
// snapshot stores, sandbox overlays, the cross-process change lock
// (change_lock.h) and, later, the kernel's database.
//
//   state home      $XDG_STATE_HOME/weft (absolute paths only), else
//                   $HOME/.local/state/weft, else /tmp/weft
//   a root's state  <state home>/<16 hex digits of hash64(real path of root)>
//
// Thread safety: stateless functions (they read the environment).
#ifndef WEFT_FS_STATE_DIR_H_
#define WEFT_FS_STATE_DIR_H_

#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft::fs {

// $XDG_STATE_HOME, else $HOME/.local/state, else /tmp (no trailing "/weft").
std::string user_state_home();

// 16 lowercase hex digits of hash64(canonical_root): a root's name in the
// state directories.
std::string root_key(std::string_view canonical_root);

// <user_state_home()>/weft/<root_key(canonical_root)>.
std::string default_root_state_dir(std::string_view canonical_root);

// Creates `dir` and its missing parents (new ones mode 0700) and checks that it
// is a directory (not a symlink) owned by this user; tightens its mode to 0700.
// kUnavailable naming the directory and the reason otherwise.
Status ensure_private_dir(const std::string& dir);

}  // namespace weft::fs

#endif  // WEFT_FS_STATE_DIR_H_
