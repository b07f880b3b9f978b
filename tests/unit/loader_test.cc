#include "plugins/loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace runx::plugins {
namespace {

const std::string kGood = RUNX_TEST_PLUGIN_GOOD_DIR;
const std::string kBad = RUNX_TEST_PLUGIN_BAD_DIR;

std::string LoadError(const std::string& path) {
  try {
    LoadPlugin(path);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(Loader, LoadsGoodPlugin) {
  auto p = LoadPlugin(kGood + "/libtest_good.so");
  EXPECT_STREQ(p.descriptor->name, "test_good");
  EXPECT_STREQ(p.descriptor->version, "0.1.2");
  EXPECT_EQ(p.descriptor->api_version, kPluginApiVersion);
  EXPECT_NE(p.descriptor->create(), nullptr);
}

TEST(Loader, RefusesWrongApiVersionNamingBoth) {
  EXPECT_EQ(LoadError(kBad + "/libtest_wrong_api.so"),
            "plugin 'libtest_wrong_api.so' uses plugin API v" + std::to_string(kPluginApiVersion + 1) +
                ", this runx supports v" + std::to_string(kPluginApiVersion) +
                "; rebuild the plugin against this runx");
}

TEST(Loader, RefusesMissingEntry) {
  EXPECT_EQ(LoadError(kBad + "/libtest_no_entry.so"),
            "plugin 'libtest_no_entry.so' has no 'runx_plugin' entry; define it with RUNX_PLUGIN(...) from "
            "runx/plugin_export.h");
}

TEST(Loader, RefusesNameThatIsNotTheFileStem) {
  EXPECT_EQ(LoadError(kBad + "/libtest_wrong_name.so"),
            "plugin 'libtest_wrong_name.so' declares the name 'someone_else'; a plugin's name must equal its "
            "file stem 'test_wrong_name'");
}

TEST(Loader, MissingFileIsAnErrorNotACrash) {
  EXPECT_NE(LoadError(kBad + "/libnothing_here.so").find("cannot load plugin"), std::string::npos);
}

// A file of random bytes named like a plugin is "not a shared library", not "Bad file descriptor"
// (issue 30, point 19); a library the loader refuses gives the loader's reason.
TEST(Loader, SaysWhyAFileIsNoPlugin) {
  const std::string dir = ::testing::TempDir() + "runx_loader_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/librandom.so", std::ios::binary) << std::string("\x13\x37garbage\0\xff bytes", 17);
  EXPECT_EQ(LoadError(dir + "/librandom.so"), "cannot load plugin '" + dir +
                                                  "/librandom.so': not a shared library (the file is neither ELF nor "
                                                  "Mach-O); rebuild the plugin");
  std::ofstream(dir + "/libtruncated.so", std::ios::binary) << "\x7f"
                                                               "ELF"
                                                               "\x02\x01\x01";
  const std::string truncated = LoadError(dir + "/libtruncated.so");
  EXPECT_NE(truncated.find("libtruncated.so"), std::string::npos) << truncated;
  EXPECT_EQ(truncated.find("Bad file descriptor"), std::string::npos) << truncated;
  std::filesystem::remove(dir + "/librandom.so");
  std::filesystem::remove(dir + "/libtruncated.so");
  std::filesystem::remove(dir);
}

TEST(Registry, DiscoversAllAndReportsBrokenOnes) {
  auto r = Registry::Discover({RUNX_PLUGIN_BUILD_DIR, kGood, kBad, "/nonexistent"});
  EXPECT_NE(r.Find("amp"), nullptr);
  EXPECT_NE(r.Find("channels_last"), nullptr);
  EXPECT_NE(r.Find("test_good"), nullptr);
  EXPECT_EQ(r.Find("test_wrong_api"), nullptr);
  EXPECT_EQ(r.errors().size(), 3u);
  EXPECT_THROW(r.Create("nope", {}), PluginError);
}

}  // namespace
}  // namespace runx::plugins
