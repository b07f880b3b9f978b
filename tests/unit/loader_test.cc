#include "plugins/loader.h"

#include <gtest/gtest.h>

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
                ", this runx supports v" + std::to_string(kPluginApiVersion) + "; rebuild the plugin against this runx");
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
