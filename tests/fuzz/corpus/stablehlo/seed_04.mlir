module @jit_conv {
  func.func public @main(%arg0: tensor<1x3x3x1xf32>, %arg1: tensor<2x2x1x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<2xf32>, tensor<3xi1>, tensor<3xi32>) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]} : (tensor<1x3x3x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x1xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<1x3x3x1xf32>) -> tensor<9xf32>
    %2 = stablehlo.slice %1 [1:5:3] : (tensor<9xf32>) -> tensor<2xf32>
    %3 = stablehlo.iota dim = 0 : tensor<3xi32>
    %4 = stablehlo.constant dense<1> : tensor<3xi32>
    %5 = stablehlo.compare  GE, %3, %4,  SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    return %0, %2, %5, %3 : tensor<1x2x2x1xf32>, tensor<2xf32>, tensor<3xi1>, tensor<3xi32>
  }
}
