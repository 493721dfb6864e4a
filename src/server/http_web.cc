// The web page's requests on the HTTP transport (HttpOptions::web): handed to
// the handler on the worker pool, since an API call may take as long as a
// kernel call; the event loop only reads and writes.
#include <exception>
#include <string>

#include "server/http_impl.h"

namespace weft::server {
namespace {

WebResponse plain_error(int status, std::string message) {
  WebResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.body = Json{{"error", std::move(message)}}.dump();
  return r;
}

}  // namespace

HttpServer::Impl::After HttpServer::Impl::handle_web(const std::shared_ptr<Conn>& conn,
                                                     const Request& req) {
  // `req` stays in the connection's parser until the answer is written.
  workers.submit([this, conn, &req] {
    std::optional<WebResponse> res;
    try {
      res = options.web(web_request_of(req));
    } catch (const std::exception& e) {
      res = plain_error(500, std::string("internal error: ") + e.what());
    }
    if (!res) res = plain_error(404, "no such page: " + std::string(req.target()));
    const bool keep = req.keep_alive() && !stopping;
    conn->send(serialize_web_response(*res, keep, req.method() == http::verb::head));
    conn->end_answer(keep);
  });
  return After::kLater;
}

}  // namespace weft::server
