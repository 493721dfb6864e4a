// The WebSocket transport of live sync (ws://HOST:PORT/sync) on the HTTP
// server's event loop, and the access-token check (see
// include/weft/server/http_transport.h and docs/sync.md).
//
// A SyncSocket owns the upgraded socket. Reads run on its strand, one at a
// time; each complete message goes to the worker pool, and the next read
// starts once SyncRooms has handled it, so a connection's frames are fed in
// order by one reader. Frames SyncRooms sends are queued on the strand and
// written one at a time; after each write SyncRooms hears how many bytes left.
#include <boost/beast/websocket.hpp>
#include <deque>
#include <iterator>

#include "server/http_impl.h"
#include "weft/server/sync_auth.h"

namespace weft::server {
namespace {

namespace websocket = beast::websocket;

// A frame may be 256 KiB; the slack covers a frame's own header bytes.
constexpr size_t kMaxMessageBytes = (256u << 10) + 1024;
constexpr size_t kReadChunk = 64u << 10;

// The value of `key` in the query of `target` ("" when absent).
std::string_view query_value(std::string_view target, std::string_view key) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == key) return pair.substr(eq + 1);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return {};
}

bool valid_person(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool HttpServer::Impl::has_token(const Request& req) const {
  if (options.token.empty()) return false;
  auto auth = req.find(http::field::authorization);
  if (auth != req.end() && sync::token_matches(options.token, sync::bearer_token(auth->value()))) {
    return true;
  }
  return sync::token_matches(options.token, query_value(req.target(), "token"));
}

std::string HttpServer::Impl::sync_person(const Request& req) const {
  std::string_view name = query_value(req.target(), "name");
  return valid_person(name) ? std::string(name) : options.sync_person;
}

class HttpServer::Impl::SyncSocket : public std::enable_shared_from_this<SyncSocket> {
 public:
  SyncSocket(Impl& impl, tcp::socket sock) : impl_(impl), ws_(std::move(sock)) {}

  ~SyncSocket() {
    if (connected_) impl_.options.sync->disconnect(id_);
  }

  void start(std::shared_ptr<Request> req, bool authorized, std::string person) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "weft"); }));
    ws_.read_message_max(kMaxMessageBytes * 4);
    ws_.async_accept(*req, [self = shared_from_this(), req, authorized,
                            person = std::move(person)](beast::error_code ec) {
      if (ec) return self->forget();
      self->on_open(authorized, person);
    });
  }

  // From any thread (the sink): queue on the strand.
  void post_send(bool text, std::string frame) {
    net::post(ws_.get_executor(), [self = shared_from_this(), text, f = std::move(frame)]() mutable {
      self->queue(text, std::move(f));
    });
  }
  void post_close(uint16_t code, std::string reason) {
    net::post(ws_.get_executor(), [self = shared_from_this(), code, r = std::move(reason)] {
      self->request_close(code, r);
    });
  }

 private:
  class Sink : public sync::SyncConnection {
   public:
    explicit Sink(std::weak_ptr<SyncSocket> s) : s_(std::move(s)) {}
    void send_binary(std::string frame) override {
      if (auto s = s_.lock()) s->post_send(false, std::move(frame));
    }
    void send_text(std::string text) override {
      if (auto s = s_.lock()) s->post_send(true, std::move(text));
    }
    void close(uint16_t code, std::string_view reason) override {
      if (auto s = s_.lock()) s->post_close(code, std::string(reason));
    }

   private:
    std::weak_ptr<SyncSocket> s_;
  };

  void on_open(bool authorized, const std::string& person) {
    if (!authorized) {
      return request_close(sync::kCloseUnauthorized,
                           "missing or wrong token: pass ?token=TOKEN or Authorization: Bearer");
    }
    sync::ConnectionInfo info;
    info.identity = person;
    const std::string token = impl_.options.token;
    // The upgrade proved the token; a JoinRequest may repeat it or carry none.
    info.permission = [token](const sync::RoomKey&,
                              std::string_view auth) -> std::optional<sync::Permission> {
      if (auth.empty() || sync::token_matches(token, auth)) return sync::Permission::kWrite;
      return std::nullopt;
    };
    info.sink = std::make_shared<Sink>(weak_from_this());
    auto id = impl_.options.sync->connect(std::move(info));
    if (!id.ok()) {
      const bool full = id.status().code() == StatusCode::kResourceExhausted;
      return request_close(full ? sync::kCloseTooManyConnections : 1011,
                           full ? "too many sync connections" : "sync unavailable");
    }
    id_ = *id;
    connected_ = true;
    read_next();
  }

  void read_next() {
    ws_.async_read_some(buffer_, kReadChunk,
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          self->on_read(ec);
                        });
  }

  void on_read(beast::error_code ec) {
    if (ec) return forget();
    if (buffer_.size() > kMaxMessageBytes) {
      buffer_.clear();
      return request_close(sync::kCloseMessageTooLarge, "message larger than 256 KiB");
    }
    if (!ws_.is_message_done()) return read_next();
    auto message = std::make_shared<std::string>(beast::buffers_to_string(buffer_.data()));
    buffer_.clear();
    const bool text = ws_.got_text();
    // Handled off the event loop (a join may export a large document); the
    // next read waits for it, keeping the connection's frames in order.
    impl_.workers.submit([self = shared_from_this(), message, text] {
      if (text) {
        self->impl_.options.sync->on_text(self->id_, *message);
      } else {
        self->impl_.options.sync->on_binary(self->id_, *message);
      }
      net::post(self->ws_.get_executor(), [self] {
        if (!self->closing_) self->read_next();
      });
    });
  }

  void queue(bool text, std::string frame) {
    if (closing_ || gone_) return;
    out_.emplace_back(text, std::move(frame));
    write_next();
  }

  void request_close(uint16_t code, const std::string& reason) {
    if (closing_ || gone_) return;
    closing_ = true;
    close_code_ = code;
    close_reason_ = reason.substr(0, 120);  // a close frame's reason is at most 123 bytes
    write_next();
  }

  void write_next() {
    if (writing_ || gone_) return;
    if (!out_.empty() && !closing_) {
      writing_ = true;
      ws_.text(out_.front().first);
      ws_.async_write(net::buffer(out_.front().second),
                      [self = shared_from_this()](beast::error_code ec, size_t n) {
                        self->writing_ = false;
                        if (!self->out_.empty()) self->out_.pop_front();
                        if (ec) return self->forget();
                        if (self->connected_) self->impl_.options.sync->on_frame_written(self->id_, n);
                        self->write_next();
                      });
      return;
    }
    if (closing_ && !close_sent_) {
      close_sent_ = true;
      writing_ = true;
      ws_.async_close(websocket::close_reason(static_cast<websocket::close_code>(close_code_), close_reason_),
                      [self = shared_from_this()](beast::error_code) {
                        self->writing_ = false;
                        self->forget();
                      });
    }
  }

  // The socket ended: leave the rooms.
  void forget() {
    if (gone_) return;
    gone_ = true;
    // A write in flight still reads the front frame: its completion drops it.
    if (writing_ && !out_.empty()) {
      out_.erase(std::next(out_.begin()), out_.end());
    } else {
      out_.clear();
    }
    if (connected_) {
      connected_ = false;
      impl_.options.sync->disconnect(id_);
    }
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).close(ignored);
  }

  Impl& impl_;
  websocket::stream<tcp::socket> ws_;
  beast::flat_buffer buffer_;
  sync::ConnectionId id_ = 0;
  bool connected_ = false;  // strand (and the destructor)
  std::deque<std::pair<bool, std::string>> out_;
  bool writing_ = false;
  bool closing_ = false;
  bool close_sent_ = false;
  bool gone_ = false;
  uint16_t close_code_ = 1000;
  std::string close_reason_;
};

HttpServer::Impl::After HttpServer::Impl::handle_sync(const std::shared_ptr<Conn>& conn,
                                                      const Request& req) {
  if (!websocket::is_upgrade(req)) {
    Json error = make_error(nullptr, rpc::kInvalidRequest,
                            "Upgrade Required: " + options.sync_endpoint +
                                " is a WebSocket endpoint (live sync; see docs/sync.md)");
    respond(*conn, req, http::status::upgrade_required, &error);
    return After::kClose;
  }
  auto request = std::make_shared<Request>(req);
  const bool authorized = has_token(req);
  std::string person = sync_person(req);
  // The socket leaves the HTTP connection: the connection ends (uncounted)
  // and its descriptor now belongs to the WebSocket.
  tcp::socket sock(std::move(conn->sock));
  end_connection(*conn);
  auto socket = std::make_shared<SyncSocket>(*this, std::move(sock));
  socket->start(std::move(request), authorized, std::move(person));
  return After::kLater;
}

}  // namespace weft::server
