// The ranks' TCP rendezvous: see roofline/engine/rendezvous.hpp.
// Wire format (little-endian host order; every rank is the same build, which
// the fingerprint exchange checks): a hello of "RFLN", rank and world as
// uint32; a message as a uint64 length and its bytes.
#include "roofline/engine/rendezvous.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>

#include "roofline/core/error.hpp"

namespace roofline::engine::dist {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what, const std::string& hint) { throw Error(ErrorKind::Device, what, hint); }

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(std::min<long long>(left, 1 << 30)) : 0;
}

// Waits for `fd` to be readable (or writable) until the deadline; false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, ms_left(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

// `peer` names the other side in messages ("rank 2", "rank 0 at host:port").
void send_all(int fd, const void* data, size_t n, Clock::time_point deadline, const std::string& peer) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLOUT, deadline)) fail(fmt::format("sending to {} timed out", peer), "is that rank stuck?");
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0)
      fail(fmt::format("{} closed its connection ({})", peer, std::strerror(errno)),
           "that rank died or was stopped: its own output says why");
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void recv_all(int fd, void* data, size_t n, Clock::time_point deadline, const std::string& peer) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (!wait_fd(fd, POLLIN, deadline))
      fail(fmt::format("{} sent nothing in time", peer), "that rank is stuck or far behind; its own output says why");
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0)
      fail(fmt::format("{} closed its connection", peer), "that rank died or was stopped: its own output says why");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void send_msg(int fd, const std::string& s, Clock::time_point deadline, const std::string& peer) {
  const std::uint64_t n = s.size();
  send_all(fd, &n, sizeof n, deadline, peer);
  send_all(fd, s.data(), s.size(), deadline, peer);
}

std::string recv_msg(int fd, Clock::time_point deadline, const std::string& peer) {
  std::uint64_t n = 0;
  recv_all(fd, &n, sizeof n, deadline, peer);
  if (n > (std::uint64_t{1} << 32)) fail(fmt::format("{} sent a message of {} bytes", peer, n), "is another program on the rendezvous port?");
  std::string s(n, '\0');
  recv_all(fd, s.data(), n, deadline, peer);
  return s;
}

struct Hello {
  char magic[4] = {'R', 'F', 'L', 'N'};
  std::uint32_t rank = 0, world = 0;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Rendezvous::Rendezvous(int rank, int world, const std::string& host, int port, std::chrono::milliseconds timeout)
    : rank_(rank), world_(world), timeout_(timeout) {
  if (world < 1 || rank < 0 || rank >= world)
    throw Error(ErrorKind::Usage, fmt::format("rank {} of a world of {}", rank, world), "a rank is from 0 to world − 1");
  if (world > 1 && (port < 1 || port > 65535))
    throw Error(ErrorKind::Usage, fmt::format("rendezvous port {} is not a TCP port", port),
                "set MASTER_PORT to a free port from 1 to 65535");
  const auto deadline = Clock::now() + timeout;
  const std::string where = fmt::format("{}:{}", host.empty() ? "127.0.0.1" : host, port);
  fds_.assign(rank == 0 ? size_t(world) : 1, -1);
  if (world == 1) return;
  if (rank == 0) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) fail(fmt::format("socket: {}", std::strerror(errno)), "");
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, world) != 0) {
      const std::string why = std::strerror(errno);
      close_fd(listen_fd_);
      fail(fmt::format("rank 0 cannot listen on port {}: {}", port, why),
           "another job holds the port: set MASTER_PORT to a free one");
    }
    int joined = 0;
    while (joined < world - 1) {
      if (!wait_fd(listen_fd_, POLLIN, deadline)) {
        std::string missing;
        for (int r = 1; r < world; ++r)
          if (fds_[size_t(r)] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        for (int& fd : fds_) close_fd(fd);
        close_fd(listen_fd_);
        fail(fmt::format("rank{} {} of {} did not reach rank 0 on port {} within {} s",
                         world - 1 - joined > 1 ? "s" : "", missing, world, port, timeout.count() / 1000.0),
             "start every rank (the launcher's world size must match the processes it starts), or check "
             "MASTER_ADDR/MASTER_PORT and the firewall");
      }
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Hello h;
      try {
        recv_all(fd, &h, sizeof h, deadline, "a connecting process");
      } catch (const Error&) {
        ::close(fd);
        continue;  // not one of ours, or it gave up: keep waiting for the ranks
      }
      const std::string who = fmt::format("rank {}", h.rank);
      if (std::memcmp(h.magic, "RFLN", 4) != 0) {
        ::close(fd);
        continue;
      }
      if (static_cast<int>(h.world) != world || static_cast<int>(h.rank) >= world || h.rank == 0 ||
          fds_[h.rank] >= 0) {
        ::close(fd);
        for (int& f : fds_) close_fd(f);
        close_fd(listen_fd_);
        fail(fmt::format("a process joined as rank {} of {}, but this job is {} ranks{}", h.rank, h.world, world,
                         h.rank < fds_.size() && h.rank > 0 && h.world == std::uint32_t(world) ? " and that rank is already here" : ""),
             "two jobs share the rendezvous port, or the launcher gave inconsistent ranks: give each job its own MASTER_PORT");
      }
      const int nodelay = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
      fds_[h.rank] = fd;
      ++joined;
    }
    close_fd(listen_fd_);
    return;
  }
  // Ranks 1..: connect, retrying while rank 0 is not listening yet.
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  const std::string h = host.empty() ? "127.0.0.1" : host;
  if (::getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res)
    throw Error(ErrorKind::Usage, fmt::format("rendezvous host '{}' is not known", h),
                "set MASTER_ADDR to rank 0's host name or address");
  for (;;) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
      fds_[0] = fd;
      break;
    }
    if (fd >= 0) ::close(fd);
    if (ms_left(deadline) == 0) {
      ::freeaddrinfo(res);
      fail(fmt::format("rank {} could not reach rank 0 at {} within {} s", rank, where, timeout.count() / 1000.0),
           "is rank 0 running? MASTER_ADDR and MASTER_PORT must name rank 0's host and a port it can listen on");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::freeaddrinfo(res);
  const int nodelay = 1;
  ::setsockopt(fds_[0], IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
  Hello hello;
  hello.rank = static_cast<std::uint32_t>(rank);
  hello.world = static_cast<std::uint32_t>(world);
  send_all(fds_[0], &hello, sizeof hello, deadline, "rank 0 at " + where);
}

Rendezvous::~Rendezvous() {
  for (int& fd : fds_) close_fd(fd);
  close_fd(listen_fd_);
}

std::vector<std::string> Rendezvous::all_gather(const std::string& mine) {
  const auto deadline = Clock::now() + timeout_;
  std::vector<std::string> all(static_cast<size_t>(world_));
  if (world_ == 1) {
    all[0] = mine;
    return all;
  }
  if (rank_ == 0) {
    all[0] = mine;
    for (int r = 1; r < world_; ++r) all[size_t(r)] = recv_msg(fds_[size_t(r)], deadline, fmt::format("rank {}", r));
    for (int r = 1; r < world_; ++r)
      for (const std::string& s : all) send_msg(fds_[size_t(r)], s, deadline, fmt::format("rank {}", r));
    return all;
  }
  send_msg(fds_[0], mine, deadline, "rank 0");
  for (auto& s : all) s = recv_msg(fds_[0], deadline, "rank 0");
  return all;
}

int rendezvous_port(const RankEnv& env) {
  if (env.master_port <= 0) return 29500;
  return env.launcher == "torchrun" ? env.master_port + 1 : env.master_port;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(fmt::format("socket: {}", std::strerror(errno)), "");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    fail("no free TCP port for the rendezvous: " + why, "set MASTER_PORT yourself");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace roofline::engine::dist
