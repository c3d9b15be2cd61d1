// Output paths (atomic_file.hpp): a regular file or a new one replaced atomically; a symbolic link
// (a chain, relative targets, a dangling one) followed to its final target, which is replaced
// while the links stay links; a character device, a FIFO or a descriptor link (/dev/stdout)
// written straight through and left what they are; a directory, a socket or a link loop refused
// with unwritable_output, nothing written. save_map (map_io.hpp) goes through the same function.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <mcubes/atomic_file.hpp>
#include <mcubes/map_io.hpp>
#include <mcubes/mcubes.hpp>

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh folder for one test, removed (with what the test left in it) at the end.
struct scratch {
  std::string dir;
  scratch() {
    std::string pattern = ::testing::TempDir() + "mcubes_atomic_XXXXXX";
    char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    dir = pattern;
  }
  ~scratch() { (void)std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string operator/(const std::string& name) const { return dir + "/" + name; }
};

mode_t lstat_type(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & S_IFMT;
}

/// The names in a folder, sorted ("." and ".." left out).
std::string listing(const std::string& dir) {
  std::string out;
  FILE* p = ::popen(("ls -A '" + dir + "'").c_str(), "r");
  char buf[256];
  while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (p != nullptr) ::pclose(p);
  return out;
}

TEST(OutputFile, ARegularFileIsReplacedAndANewOneCreated) {
  scratch s;
  const std::string f = s / "a.json";
  mcubes::write_file_atomically(f, "one\n", false);
  EXPECT_EQ(read_all(f), "one\n");
  mcubes::write_file_atomically(f, "two\n", true);
  EXPECT_EQ(read_all(f), "two\n");
  EXPECT_EQ(lstat_type(f), S_IFREG);
  EXPECT_EQ(listing(s.dir), "a.json\n");  // no temporary file left
  const mcubes::output_target t = mcubes::resolve_output(f);
  EXPECT_FALSE(t.stream);
  EXPECT_EQ(t.path, f);
}

TEST(OutputFile, ALinkChainIsFollowedAndItsFinalTargetReplaced) {
  scratch s;
  ASSERT_EQ(::mkdir((s / "sub").c_str(), 0755), 0);
  const std::string target = s / "sub/target.json";
  mcubes::write_file_atomically(target, "old\n", false);
  // link1 -> sub/link2 (relative), sub/link2 -> target.json (relative to sub/)
  ASSERT_EQ(::symlink("target.json", (s / "sub/link2").c_str()), 0);
  ASSERT_EQ(::symlink("sub/link2", (s / "link1").c_str()), 0);
  const mcubes::output_target t = mcubes::resolve_output(s / "link1");
  EXPECT_FALSE(t.stream);
  EXPECT_EQ(t.path, s.dir + "/sub/target.json");
  mcubes::write_file_atomically(s / "link1", "new\n", true);
  EXPECT_EQ(read_all(target), "new\n");
  EXPECT_EQ(lstat_type(s / "link1"), S_IFLNK);
  EXPECT_EQ(lstat_type(s / "sub/link2"), S_IFLNK);
  EXPECT_EQ(lstat_type(target), S_IFREG);
  EXPECT_EQ(listing(s / "sub"), "link2\ntarget.json\n");  // the temporary file was beside the target
}

TEST(OutputFile, ADanglingLinkCreatesItsTarget) {
  scratch s;
  ASSERT_EQ(::symlink((s / "made.json").c_str(), (s / "link").c_str()), 0);  // absolute target
  mcubes::write_file_atomically(s / "link", "made\n", false);
  EXPECT_EQ(lstat_type(s / "link"), S_IFLNK);
  EXPECT_EQ(lstat_type(s / "made.json"), S_IFREG);
  EXPECT_EQ(read_all(s / "made.json"), "made\n");
  // a dangling link into a folder that does not exist: the system's reason, nothing created
  ASSERT_EQ(::symlink("no-such-folder/x.json", (s / "far").c_str()), 0);
  EXPECT_THROW(mcubes::write_file_atomically(s / "far", "x\n", false), mcubes::error);
}

TEST(OutputFile, DevNullStaysACharacterDevice) {
  const mcubes::output_target t = mcubes::resolve_output("/dev/null");
  EXPECT_TRUE(t.stream);
  mcubes::write_file_atomically("/dev/null", "{}\n", true);  // root or not: written straight through
  EXPECT_EQ(lstat_type("/dev/null"), S_IFCHR);
}

TEST(OutputFile, AFifoIsWrittenStraightThroughAndStaysAFifo) {
  scratch s;
  const std::string fifo = s / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_all(fifo); });
  mcubes::write_file_atomically(fifo, "through the pipe\n", true);
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_EQ(lstat_type(fifo), S_IFIFO);
  EXPECT_EQ(listing(s.dir), "pipe\n");
  // a link to the FIFO: the same, the link stays
  ASSERT_EQ(::symlink("pipe", (s / "to-pipe").c_str()), 0);
  std::thread reader2([&] { got = read_all(fifo); });
  mcubes::write_file_atomically(s / "to-pipe", "again\n", false);
  reader2.join();
  EXPECT_EQ(got, "again\n");
  EXPECT_EQ(lstat_type(s / "to-pipe"), S_IFLNK);
  EXPECT_EQ(lstat_type(fifo), S_IFIFO);
}

TEST(OutputFile, DescriptorLinksAreStreams) {
  // /dev/stdout, /dev/fd/N and /proc/self/fd/N lead to the descriptor's open file, whatever it is
  for (const char* p : {"/dev/stdout", "/dev/stderr", "/proc/self/fd/1"}) {
    const mcubes::output_target t = mcubes::resolve_output(p);
    EXPECT_TRUE(t.stream) << p;
    EXPECT_EQ(t.path, p);
  }
  scratch s;
  const std::string f = s / "opened.txt";
  FILE* open_file = std::fopen(f.c_str(), "w");
  ASSERT_NE(open_file, nullptr);
  std::fputs("head\n", open_file);
  std::fflush(open_file);
  const std::string fd_link = "/proc/self/fd/" + std::to_string(::fileno(open_file));
  EXPECT_TRUE(mcubes::resolve_output(fd_link).stream);
  mcubes::write_file_atomically(fd_link, "tail\n", false);  // appended: the file is not replaced
  std::fclose(open_file);
  EXPECT_EQ(read_all(f), "head\ntail\n");
  EXPECT_EQ(listing(s.dir), "opened.txt\n");
}

TEST(OutputFile, DirectoriesSocketsAndLinkLoopsAreRefused) {
  scratch s;
  ASSERT_EQ(::mkdir((s / "dir").c_str(), 0755), 0);
  try {
    mcubes::write_file_atomically(s / "dir", "x", false);
    ADD_FAILURE() << "no exception";
  } catch (const mcubes::unwritable_output& e) {
    EXPECT_EQ(e.path(), s / "dir");
    EXPECT_EQ(e.reason(), "it is a directory");
    EXPECT_EQ(std::string(e.what()), "cannot write '" + s / "dir" + "': it is a directory");
  }
  ASSERT_EQ(::symlink("dir", (s / "to-dir").c_str()), 0);
  try {
    (void)mcubes::resolve_output(s / "to-dir");
    ADD_FAILURE() << "no exception";
  } catch (const mcubes::unwritable_output& e) {
    EXPECT_EQ(e.reason(), "its link target '" + s / "dir" + "' is a directory");
  }
  // a socket
  const std::string sock = s / "sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock.size() < sizeof addr.sun_path) {
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_THROW(mcubes::write_file_atomically(sock, "x", false), mcubes::unwritable_output);
    EXPECT_EQ(lstat_type(sock), S_IFSOCK);
  }
  ::close(fd);
  // a loop of links
  ASSERT_EQ(::symlink("loop-b", (s / "loop-a").c_str()), 0);
  ASSERT_EQ(::symlink("loop-a", (s / "loop-b").c_str()), 0);
  EXPECT_THROW(mcubes::write_file_atomically(s / "loop-a", "x", false), mcubes::unwritable_output);
  EXPECT_EQ(lstat_type(s / "loop-a"), S_IFLNK);
  // unwritable_output is bad input
  EXPECT_THROW((void)mcubes::resolve_output(s / "dir"), mcubes::invalid_input);
}

TEST(OutputFile, SaveMapFollowsLinksAndRefusesDirectories) {
  scratch s;
  mcubes::vegas_options o;
  o.calls_per_iteration = 1000;
  o.max_iterations = 2;
  o.skip = 0;
  o.min_iterations = 1;
  o.n_bins = 8;
  mcubes::integrator<1> integ(mcubes::region<1>::unit(), o);
  ASSERT_EQ(::symlink("map.json", (s / "map-link").c_str()), 0);
  mcubes::save_map(integ, s / "map-link");
  EXPECT_EQ(lstat_type(s / "map-link"), S_IFLNK);
  EXPECT_EQ(lstat_type(s / "map.json"), S_IFREG);
  EXPECT_NE(read_all(s / "map.json").find("mcubes adaptive map"), std::string::npos);
  EXPECT_THROW(mcubes::save_map(integ, s.dir), mcubes::unwritable_output);
  mcubes::save_map(integ, "/dev/null");
  EXPECT_EQ(lstat_type("/dev/null"), S_IFCHR);
}

}  // namespace
